#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <variant>

namespace cmcp {

// The requestState of multi round-trip requests: what the server hands its client with an
// input_required result and gets back with the retry. The client may read it (it is its own
// answers and what they belong to) but not change it: it is signed with HMAC-SHA256 under a
// key of the daemon's, and carries its expiry. Replicas that share the key accept each other's
// states.
class RequestStateSigner
{
public:
    // How long a client has to answer and retry.
    static constexpr qint64 LifetimeMs = 15 * 60 * 1000;
    // The shortest key accepted (a SHA-256 block's worth of entropy is plenty; less is guessable).
    static constexpr int MinimumKeyBytes = 32;

    // A signer under a fresh random key of this process's.
    RequestStateSigner();
    explicit RequestStateSigner(QByteArray key) : m_key(std::move(key)) { }

    // `payload` sealed with its expiry, `nowMs` + LifetimeMs (milliseconds since the epoch).
    QString seal(QJsonObject payload, qint64 nowMs) const;
    // The payload of a state this signer sealed, or why it is refused (not one of ours,
    // altered, expired).
    std::variant<QJsonObject, QString> open(const QString &state, qint64 nowMs) const;

private:
    QByteArray mac(const QByteArray &data) const;
    QByteArray m_key;
};

} // namespace cmcp
