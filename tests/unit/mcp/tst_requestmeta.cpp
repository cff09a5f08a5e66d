#include "mcp/RequestMeta.h"
#include "transport/MirroredHeaders.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

// Test JSON is written with single quotes (moc 6.4 mis-reads raw string literals that contain
// a double quote); this turns it into real JSON.
QJsonObject object(QString json)
{
    return QJsonDocument::fromJson(json.replace(u'\'', u'"').toUtf8()).object();
}

QJsonObject paramsWithMeta(const QString &metaJson)
{
    return object(u"{'_meta':"_s + metaJson + u'}');
}

const QString goodMeta = u"{'io.modelcontextprotocol/protocolVersion':'2026-07-28',"
                         "'io.modelcontextprotocol/clientCapabilities':{'sampling':{}}"_s;

} // namespace

// What a request of the modern era says about itself in params._meta, and the errors that name
// what is missing.
class TestRequestMeta : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsVersionCapabilitiesClientAndLevel()
    {
        const auto read = readRequestMeta(paramsWithMeta(
                goodMeta
                + u",'io.modelcontextprotocol/clientInfo':{'name':'c'},'io.modelcontextprotocol/logLevel':'warning'}"_s));
        const auto *meta = std::get_if<RequestMeta>(&read);
        QVERIFY(meta);
        QCOMPARE(meta->protocolVersion, u"2026-07-28"_s);
        QVERIFY(meta->clientCapabilities.contains(u"sampling"_s));
        QCOMPARE(meta->clientInfo.value(u"name"_s).toString(), u"c"_s);
        QCOMPARE(meta->logLevel, std::optional(LogLevel::Warning));
    }

    void clientInfoAndLevelAreOptional()
    {
        const auto read = readRequestMeta(paramsWithMeta(goodMeta + u'}'));
        const auto *meta = std::get_if<RequestMeta>(&read);
        QVERIFY(meta);
        QVERIFY(meta->clientInfo.isEmpty());
        QVERIFY(!meta->logLevel);
    }

    void missingOrMalformedFieldsAreInvalidParamsNamingThem_data()
    {
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QString>("named");
        QTest::newRow("no params") << QJsonObject() << u"params._meta is missing"_s;
        QTest::newRow("_meta not an object") << object(u"{'_meta':[]}"_s) << u"params._meta"_s;
        QTest::newRow("no version")
                << paramsWithMeta(u"{'io.modelcontextprotocol/clientCapabilities':{}}"_s)
                << u"protocolVersion"_s;
        QTest::newRow("version not a string")
                << paramsWithMeta(u"{'io.modelcontextprotocol/protocolVersion':20260728,"
                                  "'io.modelcontextprotocol/clientCapabilities':{}}"_s)
                << u"protocolVersion"_s;
        QTest::newRow("no capabilities")
                << paramsWithMeta(u"{'io.modelcontextprotocol/protocolVersion':'2026-07-28'}"_s)
                << u"clientCapabilities"_s;
        QTest::newRow("clientInfo not an object")
                << paramsWithMeta(goodMeta + u",'io.modelcontextprotocol/clientInfo':'c'}"_s)
                << u"clientInfo"_s;
        QTest::newRow("unknown log level")
                << paramsWithMeta(goodMeta + u",'io.modelcontextprotocol/logLevel':'loud'}"_s)
                << u"logLevel"_s;
    }
    void missingOrMalformedFieldsAreInvalidParamsNamingThem()
    {
        QFETCH(QJsonObject, params);
        QFETCH(QString, named);
        const auto read = readRequestMeta(params);
        const auto *rejection = std::get_if<RequestRejection>(&read);
        QVERIFY(rejection);
        QCOMPARE(rejection->code, int(jsonrpc::InvalidParams));
        QVERIFY2(rejection->message.contains(named), qPrintable(rejection->message));
    }

    void anUnsupportedVersionListsBothEras()
    {
        const RequestRejection rejection = unsupportedVersion(u"1999-01-01"_s);
        QCOMPARE(rejection.code, int(jsonrpc::UnsupportedProtocolVersion));
        const QJsonObject data = rejection.data.toObject();
        QCOMPARE(data.value(u"requested"_s).toString(), u"1999-01-01"_s);
        const QJsonArray supported = data.value(u"supported"_s).toArray();
        QVERIFY(supported.contains(u"2026-07-28"_s));
        QVERIFY(supported.contains(u"2025-11-25"_s));
    }

    void aRejectionEchoesTheIdOrHasNone()
    {
        const RequestRejection rejection{jsonrpc::HeaderMismatch, u"no"_s};
        QCOMPARE(rejectionResponse(7, rejection).value(u"id"_s).toInt(), 7);
        QVERIFY(!rejectionResponse(QJsonValue::Undefined, rejection).contains(u"id"_s));
    }

    void statelessRequestsAreTheOnesWithAVersionInMetaAndDiscovery()
    {
        auto message = [](const QString &json) { return jsonrpc::classify(object(json)); };
        QVERIFY(isStatelessRequest(message(
                u"{'jsonrpc':'2.0','id':1,'method':'tools/list','params':{'_meta':{'io.modelcontextprotocol/protocolVersion':'x'}}}"_s)));
        QVERIFY(isStatelessRequest(
                message(u"{'jsonrpc':'2.0','id':1,'method':'server/discover'}"_s)));
        QVERIFY(!isStatelessRequest(message(u"{'jsonrpc':'2.0','id':1,'method':'tools/list'}"_s)));
        QVERIFY(!isStatelessRequest(message(
                u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'_meta':{'io.modelcontextprotocol/protocolVersion':'x'}}}"_s)));
    }

    void headerValuesAreTrimmedAndBase64Decoded()
    {
        QCOMPARE(decodeHeaderValue("  tools/call \t"), std::optional(u"tools/call"_s));
        QCOMPARE(decodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="),
                 std::optional(u"Hello, 世界"_s));
        QCOMPARE(decodeHeaderValue("=?base64?IHBhZGRlZCA=?="), std::optional(u" padded "_s));
        QCOMPARE(decodeHeaderValue("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
                 std::optional(u"=?base64?literal?="_s));
        QCOMPARE(decodeHeaderValue("=?base64?not base64!?="), std::nullopt);
        // Valid base64 of bytes that are not UTF-8.
        QCOMPARE(decodeHeaderValue("=?base64?/w==?="), std::nullopt);
        // The markers are case-sensitive: anything else is a plain value.
        QCOMPARE(decodeHeaderValue("=?BASE64?eA==?="), std::optional(u"=?BASE64?eA==?="_s));
    }
};

QTEST_GUILESS_MAIN(TestRequestMeta)
#include "tst_requestmeta.moc"
