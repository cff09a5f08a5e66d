// The signed requestState of multi round-trip requests: what one signer seals it opens again
// until it expires, and nothing altered or sealed under another key.
#include "mcp/RequestState.h"

#include <QJsonObject>
#include <QTest>

using namespace cmcp;

class TestRequestState : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void opensWhatItSealedUntilItExpires()
    {
        const RequestStateSigner signer(QByteArray(32, 'k'));
        const QJsonObject payload{{QLatin1String("answers"), QJsonObject{{"a", 1}}}};
        const qint64 now = 1'000'000;
        const QString state = signer.seal(payload, now);
        const auto opened = signer.open(state, now + RequestStateSigner::LifetimeMs);
        QVERIFY(std::holds_alternative<QJsonObject>(opened));
        QCOMPARE(std::get<QJsonObject>(opened).value(QLatin1String("answers")),
                 payload.value(QLatin1String("answers")));
        const auto expired = signer.open(state, now + RequestStateSigner::LifetimeMs + 1);
        QVERIFY(std::holds_alternative<QString>(expired));
        QVERIFY(std::get<QString>(expired).contains(QLatin1String("expired")));
    }

    void refusesAlteredStatesAndOtherKeys()
    {
        const RequestStateSigner signer(QByteArray(32, 'k'));
        const QString state = signer.seal({}, 0);
        const auto refused = [&](const RequestStateSigner &by, const QString &text) {
            const auto opened = by.open(text, 0);
            return std::holds_alternative<QString>(opened)
                    && std::get<QString>(opened).contains(QLatin1String("altered"));
        };
        QVERIFY(refused(RequestStateSigner(QByteArray(32, 'K')), state));
        QVERIFY(refused(RequestStateSigner(), state));
        QVERIFY(refused(signer, state + QLatin1String("x")));
        QVERIFY(refused(signer, QLatin1Char('x') + state));
        QVERIFY(refused(signer, state.section(QLatin1Char('.'), 0, 0)));
        QVERIFY(refused(signer, QString()));
        QVERIFY(refused(signer, QStringLiteral("é.") + state));
        // A payload that claims a later expiry under the old signature.
        const QString body = QString::fromLatin1(
                QByteArray(R"({"exp":9e15})")
                        .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
        QVERIFY(refused(signer, body + QLatin1Char('.') + state.section(QLatin1Char('.'), 1)));
    }
};

QTEST_GUILESS_MAIN(TestRequestState)
#include "tst_requeststate.moc"
