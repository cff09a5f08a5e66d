#include "mcp/JsonRpc.h"
#include "mcp/JsonWriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QtTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;
using jsonrpc::MessageKind;

namespace {

// Test JSON is written with single quotes (moc 6.4 mis-reads raw string literals that contain
// a double quote); this turns it into real JSON text.
QByteArray jsonText(QString json)
{
    return json.replace(u'\'', u'"').toUtf8();
}

// Parsed from text, like a client's message: 1 arrives as a number, '1' as a string.
QJsonValue valueFrom(const QString &json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(jsonText(u'[' + json + u']'), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad JSON in test: %s (%s)", qPrintable(json), qPrintable(error.errorString()));
    return document.array().at(0);
}

} // namespace

Q_DECLARE_METATYPE(cmcp::jsonrpc::MessageKind)

class TestJsonRpc : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void classifiesValidMessages_data();
    void classifiesValidMessages();
    void rejectsInvalidMessages_data();
    void rejectsInvalidMessages();
    void classifyKeepsTheWholeObject();

    void parseErrorNamesTheOffset_data();
    void parseErrorNamesTheOffset();
    void parsesASingleMessage();
    void parsesABatch();
    void parsesAnEmptyBatch();

    void idKeyDistinguishesStringsFromNumbers();
    void idKeyKeepsLargeIntegersApart();
    void errorResponseWithNullIdIsAResponse();
    void makeErrorKeepsTheId();
    void makeErrorUsesNullForAnUndefinedId();
    void makeErrorCarriesData();
    void makeResultNotificationAndRequest();
    void serializeIsOneLine();
    void serializeWritesWhatQtWrites();
    void serializeTakesUtf8Fields();
};

void TestJsonRpc::classifiesValidMessages_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<MessageKind>("kind");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QJsonValue>("id");
    QTest::addColumn<bool>("hasParams");

    QTest::newRow("request, numeric id")
            << u"{'jsonrpc':'2.0','id':1,'method':'ping'}"_s << MessageKind::Request << u"ping"_s
            << QJsonValue(1) << false;
    QTest::newRow("request, string id, object params")
            << u"{'jsonrpc':'2.0','id':'a-1','method':'tools/call','params':{'name':'x'}}"_s
            << MessageKind::Request << u"tools/call"_s << QJsonValue(u"a-1"_s) << true;
    QTest::newRow("request, array params")
            << u"{'jsonrpc':'2.0','id':0,'method':'m','params':[1,2]}"_s << MessageKind::Request
            << u"m"_s << QJsonValue(0) << true;
    QTest::newRow("request, fractional id")
            << u"{'jsonrpc':'2.0','id':1.5,'method':'m'}"_s << MessageKind::Request << u"m"_s
            << QJsonValue(1.5) << false;
    QTest::newRow("notification") << u"{'jsonrpc':'2.0','method':'notifications/initialized'}"_s
                                  << MessageKind::Notification << u"notifications/initialized"_s
                                  << QJsonValue(QJsonValue::Undefined) << false;
    QTest::newRow("notification with params")
            << u"{'jsonrpc':'2.0','method':'notifications/cancelled','params':{'requestId':3}}"_s
            << MessageKind::Notification << u"notifications/cancelled"_s
            << QJsonValue(QJsonValue::Undefined) << true;
    QTest::newRow("result response")
            << u"{'jsonrpc':'2.0','id':'cmcp-1','result':{}}"_s << MessageKind::Response
            << QString() << QJsonValue(u"cmcp-1"_s) << false;
    QTest::newRow("error response")
            << u"{'jsonrpc':'2.0','id':7,'error':{'code':-1,'message':'no'}}"_s
            << MessageKind::Response << QString() << QJsonValue(7) << false;
}

void TestJsonRpc::classifiesValidMessages()
{
    QFETCH(QString, json);
    QFETCH(MessageKind, kind);
    QFETCH(QString, method);
    QFETCH(QJsonValue, id);
    QFETCH(bool, hasParams);

    const jsonrpc::Message message = jsonrpc::classify(valueFrom(json));
    QCOMPARE(message.kind, kind);
    QVERIFY2(message.invalidReason.isEmpty(), qPrintable(message.invalidReason));
    QCOMPARE(message.method, method);
    QCOMPARE(message.id, id);
    if (kind != MessageKind::Response)
        QCOMPARE(message.params.isUndefined(), !hasParams);
    if (hasParams)
        QVERIFY(message.params.isObject() || message.params.isArray());
}

void TestJsonRpc::rejectsInvalidMessages_data()
{
    QTest::addColumn<QJsonValue>("value");
    QTest::addColumn<QJsonValue>("id"); // the id the error response must carry
    QTest::addColumn<QString>("reason"); // a part of the reason text

    const QJsonValue null(QJsonValue::Null);
    QTest::newRow("jsonrpc missing") << valueFrom(u"{'id':1,'method':'ping'}"_s) << QJsonValue(1)
                                     << u"\"jsonrpc\" must be \"2.0\""_s;
    QTest::newRow("jsonrpc 1.0") << valueFrom(u"{'jsonrpc':'1.0','id':'x','method':'ping'}"_s)
                                 << QJsonValue(u"x"_s) << u"\"jsonrpc\" must be \"2.0\""_s;
    QTest::newRow("jsonrpc number 2.0") << valueFrom(u"{'jsonrpc':2.0,'id':1,'method':'ping'}"_s)
                                        << QJsonValue(1) << u"\"jsonrpc\" must be \"2.0\""_s;
    QTest::newRow("id null") << valueFrom(u"{'jsonrpc':'2.0','id':null,'method':'ping'}"_s) << null
                             << u"\"id\" must be a string or a number"_s;
    QTest::newRow("id object") << valueFrom(u"{'jsonrpc':'2.0','id':{'a':1},'method':'ping'}"_s)
                               << null << u"\"id\" must be a string or a number"_s;
    QTest::newRow("id bool") << valueFrom(u"{'jsonrpc':'2.0','id':true,'method':'ping'}"_s) << null
                             << u"\"id\" must be a string or a number"_s;
    QTest::newRow("id array") << valueFrom(u"{'jsonrpc':'2.0','id':[1],'method':'ping'}"_s) << null
                              << u"\"id\" must be a string or a number"_s;
    QTest::newRow("method number") << valueFrom(u"{'jsonrpc':'2.0','id':2,'method':5}"_s)
                                   << QJsonValue(2) << u"\"method\" must be a non-empty string"_s;
    QTest::newRow("method null") << valueFrom(u"{'jsonrpc':'2.0','id':2,'method':null}"_s)
                                 << QJsonValue(2) << u"\"method\" must be a non-empty string"_s;
    QTest::newRow("method empty") << valueFrom(u"{'jsonrpc':'2.0','id':'e','method':''}"_s)
                                  << QJsonValue(u"e"_s)
                                  << u"\"method\" must be a non-empty string"_s;
    QTest::newRow("notification method empty")
            << valueFrom(u"{'jsonrpc':'2.0','method':''}"_s) << null
            << u"\"method\" must be a non-empty string"_s;
    QTest::newRow("params string")
            << valueFrom(u"{'jsonrpc':'2.0','id':3,'method':'ping','params':'x'}"_s)
            << QJsonValue(3) << u"\"params\" must be an object or an array"_s;
    QTest::newRow("params number")
            << valueFrom(u"{'jsonrpc':'2.0','id':3,'method':'ping','params':4}"_s) << QJsonValue(3)
            << u"\"params\" must be an object or an array"_s;
    QTest::newRow("params null") << valueFrom(
            u"{'jsonrpc':'2.0','id':3,'method':'ping','params':null}"_s)
                                 << QJsonValue(3) << u"\"params\" must be an object or an array"_s;
    QTest::newRow("result and error")
            << valueFrom(u"{'jsonrpc':'2.0','id':4,'result':{},'error':{'code':1,'message':'m'}}"_s)
            << QJsonValue(4) << u"exactly one of \"result\" and \"error\""_s;
    QTest::newRow("response without id") << valueFrom(u"{'jsonrpc':'2.0','result':{}}"_s) << null
                                         << u"a response needs an \"id\""_s;
    QTest::newRow("error response without id")
            << valueFrom(u"{'jsonrpc':'2.0','error':{'code':1,'message':'m'}}"_s) << null
            << u"a response needs an \"id\""_s;
    QTest::newRow("error a string") << valueFrom(u"{'jsonrpc':'2.0','id':5,'error':'bad'}"_s)
                                    << QJsonValue(5) << u"\"error\" must be an object"_s;
    QTest::newRow("error an array") << valueFrom(u"{'jsonrpc':'2.0','id':5,'error':[]}"_s)
                                    << QJsonValue(5) << u"\"error\" must be an object"_s;
    QTest::newRow("neither request nor response")
            << valueFrom(u"{'jsonrpc':'2.0','id':6}"_s) << QJsonValue(6)
            << u"neither a request, a notification nor a response"_s;
    QTest::newRow("number") << QJsonValue(42) << null << u"must be a JSON object"_s;
    QTest::newRow("string") << QJsonValue(u"{}"_s) << null << u"must be a JSON object"_s;
    QTest::newRow("array") << QJsonValue(QJsonArray{1}) << null << u"must be a JSON object"_s;
    QTest::newRow("null") << QJsonValue(QJsonValue::Null) << null << u"must be a JSON object"_s;
}

void TestJsonRpc::rejectsInvalidMessages()
{
    QFETCH(QJsonValue, value);
    QFETCH(QJsonValue, id);
    QFETCH(QString, reason);

    const jsonrpc::Message message = jsonrpc::classify(value);
    QCOMPARE(message.kind, MessageKind::Invalid);
    QVERIFY2(message.invalidReason.contains(reason),
             qPrintable(u"reason was: "_s + message.invalidReason));
    QCOMPARE(message.id, id);
    // The error response can always be built from it and carries a legal id.
    const QJsonObject error =
            jsonrpc::makeError(message.id, jsonrpc::InvalidRequest, message.invalidReason);
    QVERIFY(error.value(u"id"_s).isNull() || error.value(u"id"_s) == id);
}

void TestJsonRpc::classifyKeepsTheWholeObject()
{
    const QJsonValue value =
            valueFrom(u"{'jsonrpc':'2.0','id':9,'method':'x','params':{'a':[1]},'extra':true}"_s);
    const jsonrpc::Message message = jsonrpc::classify(value);
    QCOMPARE(message.kind, MessageKind::Request);
    QCOMPARE(message.object, value.toObject());
    QCOMPARE(message.params.toObject().value(u"a"_s), QJsonValue(QJsonArray{1}));
}

void TestJsonRpc::parseErrorNamesTheOffset_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("offset");

    // Where Qt's parser stops, which is what a client needs to find the fault.
    for (const QByteArray &bytes : {QByteArray("{\"jsonrpc\":\"2.0\",}"), QByteArray("{\"a\":"),
                                    QByteArray("[1,2"), QByteArray("not json"), QByteArray("")}) {
        QJsonParseError error;
        QJsonDocument::fromJson(bytes, &error);
        QVERIFY(error.error != QJsonParseError::NoError);
        QTest::newRow(bytes.isEmpty() ? "empty" : bytes.constData()) << bytes << error.offset;
    }
}

void TestJsonRpc::parseErrorNamesTheOffset()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, offset);

    const jsonrpc::Payload payload = jsonrpc::parsePayload(bytes);
    QVERIFY(payload.parseError);
    QVERIFY(payload.messages.isEmpty());
    QVERIFY2(payload.parseErrorText.contains(u"offset %1"_s.arg(offset)),
             qPrintable(payload.parseErrorText));
}

void TestJsonRpc::parsesASingleMessage()
{
    const jsonrpc::Payload payload =
            jsonrpc::parsePayload(jsonText(u"{'jsonrpc':'2.0','id':1,'method':'ping'}"_s));
    QVERIFY(!payload.parseError);
    QVERIFY(!payload.batch);
    QCOMPARE(payload.messages.size(), 1);
    QCOMPARE(payload.messages[0].kind, MessageKind::Request);
    QCOMPARE(payload.messages[0].method, u"ping"_s);
}

void TestJsonRpc::parsesABatch()
{
    const jsonrpc::Payload payload = jsonrpc::parsePayload(
            jsonText(u"[{'jsonrpc':'2.0','id':1,'method':'ping'},"
                     u" {'jsonrpc':'2.0','method':'notifications/initialized'},"
                     u" {'jsonrpc':'2.0','id':'r','result':{}},"
                     u" 5,"
                     u" {'jsonrpc':'2.0','id':2,'method':3}]"_s));
    QVERIFY(!payload.parseError);
    QVERIFY(payload.batch);
    QCOMPARE(payload.messages.size(), 5);
    QCOMPARE(payload.messages[0].kind, MessageKind::Request);
    QCOMPARE(payload.messages[1].kind, MessageKind::Notification);
    QCOMPARE(payload.messages[2].kind, MessageKind::Response);
    QCOMPARE(payload.messages[3].kind, MessageKind::Invalid);
    QVERIFY(payload.messages[3].invalidReason.contains(u"must be a JSON object"_s));
    QCOMPARE(payload.messages[4].kind, MessageKind::Invalid);
    QCOMPARE(payload.messages[4].id, QJsonValue(2));
}

void TestJsonRpc::parsesAnEmptyBatch()
{
    const jsonrpc::Payload payload = jsonrpc::parsePayload("[]");
    QVERIFY(!payload.parseError);
    QVERIFY(payload.batch);
    QVERIFY(payload.messages.isEmpty());

    const jsonrpc::Payload spaced = jsonrpc::parsePayload(" [ ] \n");
    QVERIFY(!spaced.parseError);
    QVERIFY(spaced.batch);
    QVERIFY(spaced.messages.isEmpty());
}

void TestJsonRpc::idKeyDistinguishesStringsFromNumbers()
{
    const QString stringKey = jsonrpc::idKey(QJsonValue(u"1"_s));
    const QString numberKey = jsonrpc::idKey(QJsonValue(1));
    QVERIFY(!stringKey.isEmpty());
    QVERIFY(!numberKey.isEmpty());
    QVERIFY(stringKey != numberKey);
    // The same id read twice gives the same key, however the number was written.
    QCOMPARE(jsonrpc::idKey(valueFrom(u"1"_s)), numberKey);
    QCOMPARE(jsonrpc::idKey(valueFrom(u"1.0"_s)), numberKey);
    QCOMPARE(jsonrpc::idKey(valueFrom(u"'1'"_s)), stringKey);
    QVERIFY(jsonrpc::idKey(QJsonValue(2)) != numberKey);
    QVERIFY(jsonrpc::idKey(QJsonValue(1.5)) != numberKey);
    QVERIFY(jsonrpc::idKey(QJsonValue(u"a"_s)) != jsonrpc::idKey(QJsonValue(u"b"_s)));
    // Large integer ids stay distinct.
    QVERIFY(jsonrpc::idKey(QJsonValue(qint64(9007199254740991)))
            != jsonrpc::idKey(QJsonValue(qint64(9007199254740990))));
    QVERIFY(jsonrpc::idKey(QJsonValue(QJsonValue::Null)).isEmpty());
}

void TestJsonRpc::idKeyKeepsLargeIntegersApart()
{
    // 2^53 and 2^53 + 1 are the same double: the key must not go through double.
    const QString a = jsonrpc::idKey(valueFrom(u"9007199254740992"_s));
    const QString b = jsonrpc::idKey(valueFrom(u"9007199254740993"_s));
    QVERIFY2(a != b, qPrintable(a));
}

void TestJsonRpc::errorResponseWithNullIdIsAResponse()
{
    // JSON-RPC 2.0 section 5: a peer that could not read the id answers with a null id.
    const jsonrpc::Message message = jsonrpc::classify(
            valueFrom(u"{'jsonrpc':'2.0','id':null,'error':{'code':-32700,'message':'m'}}"_s));
    QCOMPARE(message.kind, MessageKind::Response);
    QVERIFY(message.id.isNull());
    // A result still needs a real id.
    QCOMPARE(jsonrpc::classify(valueFrom(u"{'jsonrpc':'2.0','id':null,'result':{}}"_s)).kind,
             MessageKind::Invalid);
}

void TestJsonRpc::makeErrorKeepsTheId()
{
    for (const QJsonValue &id : {QJsonValue(7), QJsonValue(u"seven"_s), QJsonValue(0)}) {
        const QJsonObject error =
                jsonrpc::makeError(id, jsonrpc::MethodNotFound, u"method not found: x"_s);
        QCOMPARE(error.value(u"jsonrpc"_s), QJsonValue(u"2.0"_s));
        QCOMPARE(error.value(u"id"_s), id);
        QVERIFY(!error.contains(u"result"_s));
        const QJsonObject body = error.value(u"error"_s).toObject();
        QCOMPARE(body.value(u"code"_s).toInt(), -32601);
        QCOMPARE(body.value(u"message"_s).toString(), u"method not found: x"_s);
        QVERIFY(!body.contains(u"data"_s));
        // What the client receives classifies as a response.
        QCOMPARE(jsonrpc::classify(error).kind, MessageKind::Response);
    }
}

void TestJsonRpc::makeErrorUsesNullForAnUndefinedId()
{
    const QJsonObject error =
            jsonrpc::makeError(QJsonValue(QJsonValue::Undefined), jsonrpc::ParseError, u"bad"_s);
    QVERIFY(error.contains(u"id"_s));
    QVERIFY(error.value(u"id"_s).isNull());
    // And it survives serialization as an explicit null.
    const QJsonObject back = QJsonDocument::fromJson(jsonrpc::serialize(error)).object();
    QVERIFY(back.contains(u"id"_s));
    QVERIFY(back.value(u"id"_s).isNull());
    QCOMPARE(back.value(u"error"_s).toObject().value(u"code"_s).toInt(), -32700);

    const QJsonObject nullId =
            jsonrpc::makeError(QJsonValue(QJsonValue::Null), jsonrpc::InvalidRequest, u"bad"_s);
    QVERIFY(nullId.value(u"id"_s).isNull());
}

void TestJsonRpc::makeErrorCarriesData()
{
    const QJsonObject data{{u"uri"_s, u"file:///x"_s}};
    const QJsonObject error =
            jsonrpc::makeError(1, jsonrpc::ResourceNotFound, u"resource not found"_s, data);
    QCOMPARE(error.value(u"error"_s).toObject().value(u"data"_s).toObject(), data);
    QCOMPARE(error.value(u"error"_s).toObject().value(u"code"_s).toInt(), -32002);
}

void TestJsonRpc::makeResultNotificationAndRequest()
{
    const QJsonObject result = jsonrpc::makeResult(u"r1"_s, QJsonObject{{u"ok"_s, true}});
    QCOMPARE(result.value(u"jsonrpc"_s), QJsonValue(u"2.0"_s));
    QCOMPARE(result.value(u"id"_s), QJsonValue(u"r1"_s));
    QCOMPARE(result.value(u"result"_s).toObject().value(u"ok"_s), QJsonValue(true));
    QCOMPARE(jsonrpc::classify(result).kind, MessageKind::Response);

    const QJsonObject bare = jsonrpc::makeNotification(u"notifications/tools/list_changed"_s);
    QVERIFY(!bare.contains(u"params"_s));
    QVERIFY(!bare.contains(u"id"_s));
    QCOMPARE(jsonrpc::classify(bare).kind, MessageKind::Notification);
    const QJsonObject withParams =
            jsonrpc::makeNotification(u"notifications/progress"_s, {{u"progress"_s, 1}});
    QCOMPARE(withParams.value(u"params"_s).toObject().value(u"progress"_s).toInt(), 1);

    const QJsonObject request =
            jsonrpc::makeRequest(u"cmcp-1"_s, u"sampling/createMessage"_s, {{u"a"_s, 1}});
    const jsonrpc::Message message = jsonrpc::classify(request);
    QCOMPARE(message.kind, MessageKind::Request);
    QCOMPARE(message.id, QJsonValue(u"cmcp-1"_s));
    QCOMPARE(message.method, u"sampling/createMessage"_s);
}

void TestJsonRpc::serializeIsOneLine()
{
    const QJsonObject message = jsonrpc::makeResult(
            1,
            QJsonObject{
                    {u"text"_s, u"line one\nline two\r\n"_s},
                    {u"nested"_s,
                     QJsonObject{{u"list"_s, QJsonArray{1, 2, QJsonObject{{u"x"_s, u"y"_s}}}}}}});
    const QByteArray line = jsonrpc::serialize(message);
    QVERIFY(!line.isEmpty());
    QVERIFY(!line.contains('\n'));
    QVERIFY(!line.contains('\r'));
    QCOMPARE(QJsonDocument::fromJson(line).object(), message);

    const QJsonArray batch{message, jsonrpc::makeError(2, jsonrpc::InternalError, u"a\nb"_s)};
    const QByteArray batchLine = jsonrpc::serialize(QJsonValue(batch));
    QVERIFY(!batchLine.contains('\n'));
    QVERIFY(batchLine.startsWith('['));
    QCOMPARE(QJsonDocument::fromJson(batchLine).array(), batch);

    const QByteArray single = jsonrpc::serialize(QJsonValue(message));
    QCOMPARE(single, line);
}

// json::serialize replaces QJsonDocument::toJson(Compact) on the wire: the same bytes.
void TestJsonRpc::serializeWritesWhatQtWrites()
{
    QString controls;
    for (char16_t c = 0; c < 0x20; ++c)
        controls += QChar(c);
    const QJsonObject value{
            {u"controls"_s, controls},
            {u"quotes"_s, u"\"back\\slash\" /slash \u007f"_s},
            {u"unicode"_s, u"h\u00e9llo \u4e16\u754c \U0001F600"_s},
            {u"lone"_s, QString(QChar(0xd800)) + u"x"_s + QChar(0xdc00)},
            {u"numbers"_s,
             QJsonArray{0, -1, 42, 1.5, -0.1, 1e300, 3.0, 9007199254740993LL, double(1LL << 60),
                        qint64(-9223372036854775807LL)}},
            {u"literals"_s, QJsonArray{true, false, QJsonValue::Null}},
            {u"empty"_s, QJsonObject{}},
            {u"nested"_s, QJsonArray{QJsonArray{}, QJsonObject{{u"k\u00e9y"_s, u""_s}}}},
            {u"\n"_s, 1}};
    QCOMPARE(json::serialize(value), QJsonDocument(value).toJson(QJsonDocument::Compact));
    const QJsonArray array{value, 1, u"x"_s};
    QCOMPARE(json::serialize(QJsonValue(array)),
             QJsonDocument(array).toJson(QJsonDocument::Compact));
    QCOMPARE(jsonrpc::serialize(QJsonValue(array)),
             QJsonDocument(array).toJson(QJsonDocument::Compact));

    // The escaper skips eight bytes at a time: special characters at every offset of a word.
    const QString alphabet = u"ab \"\\\n\u0001\u001f\u007f\u00e9\u4e16"_s;
    QRandomGenerator random(5);
    for (int i = 0; i < 2000; ++i) {
        QString text;
        const int length = random.bounded(40);
        for (int j = 0; j < length; ++j)
            text += alphabet.at(random.bounded(alphabet.size()));
        const QJsonArray holder{text};
        QCOMPARE(json::serialize(QJsonValue(holder)),
                 QJsonDocument(holder).toJson(QJsonDocument::Compact));
    }
}

void TestJsonRpc::serializeTakesUtf8Fields()
{
    const QByteArray text("line\n\"q\" \xc3\xa9\t\x01 end");
    const QJsonObject value{{u"a"_s, 1}, {u"content"_s, QString::fromUtf8(text)}, {u"z"_s, u"b"_s}};
    const QByteArray spliced = json::serialize(value, {{u"content"_s, text}});
    QCOMPARE(spliced, QJsonDocument(value).toJson(QJsonDocument::Compact));
    // The field's text comes from the bytes, whatever the object holds.
    const QJsonObject placeholder{{u"a"_s, 1}, {u"content"_s, u""_s}, {u"z"_s, u"b"_s}};
    QCOMPARE(json::serialize(placeholder, {{u"content"_s, text}}), spliced);
}

QTEST_GUILESS_MAIN(TestJsonRpc)
#include "tst_jsonrpc.moc"
