#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

// The admin channel between cmcpd and cmcp-console: one JSON object per line (UTF-8, '\n'), in
// both directions. Defined once here so that both programs agree on it.
//
//   {"type":"hello","version":1,"program":"cmcpd","programVersion":"0.1.0"}   both ways, first
//   {"type":"event","event":"callFinished","data":{...}}                      daemon → console
//   {"type":"request","id":7,"method":"snapshot","params":{...}}              console → daemon
//   {"type":"reply","id":7,"result":{...}}                                    daemon → console
//   {"type":"error","id":7,"code":"bad_request","message":"..."}              either way; id is
//                                                                              absent when the
//                                                                              line had none
namespace cmcp::admin {

// Events and fields may be added within a version (callProgress was): a side ignores event
// names and fields it does not know. A change that breaks an existing message bumps it.
constexpr int protocolVersion = 1;
// The daemon sends a running call's progress at most this often.
constexpr int progressIntervalMs = 250;
// Longest line either side accepts; longer ones are skipped and answered with an error.
constexpr qsizetype maxLineBytes = 1024 * 1024;

enum class MessageType { Hello, Event, Request, Reply, Error };

// What events, requests and replies carry is typed, each kind a record with toJson() and
// fromJson() that both sides use, so that no side spells a field by hand:
//   AdminCallRecords.h      call, progress; callStarted, callFinished, callProgress; cancelCall
//   AdminSessionRecords.h   session; sessionOpened, sessionClosed; closeSession
//   AdminSettingRecords.h   setting; settingChanged; setSetting
//   AdminLogRecords.h       log; subscribeLog
//   AdminSnapshotRecords.h  counters (also an event), sandbox report, snapshot; dropped
//   AdminWorkspaceRecords.h workspace; listWorkspaces, deleteWorkspace
// Arguments are redacted with SecretRedaction.h, as in the audit log.

// Event names.
inline constexpr char eventSessionOpened[] = "sessionOpened";
inline constexpr char eventSessionClosed[] = "sessionClosed";
inline constexpr char eventCallStarted[] = "callStarted";
inline constexpr char eventCallFinished[] = "callFinished";
inline constexpr char eventCallProgress[] = "callProgress";
inline constexpr char eventLog[] = "log";
inline constexpr char eventCounters[] = "counters";
inline constexpr char eventDropped[] = "dropped";
inline constexpr char eventSettingChanged[] = "settingChanged";

// Request methods: params → result.
inline constexpr char methodSnapshot[] = "snapshot"; // {} → SnapshotRecord
inline constexpr char methodCancelCall[] = "cancelCall"; // CancelCallParams → {}
inline constexpr char methodCloseSession[] = "closeSession"; // CloseSessionParams → {}
inline constexpr char methodSetSetting[] = "setSetting"; // SetSettingParams → SetSettingResult
// SubscribeLogParams → SubscribeLogResult
inline constexpr char methodSubscribeLog[] = "subscribeLog";
inline constexpr char methodListWorkspaces[] = "listWorkspaces"; // {} → ListWorkspacesResult
// DeleteWorkspaceParams → DeleteWorkspaceResult
inline constexpr char methodDeleteWorkspace[] = "deleteWorkspace";
// Reads MCP_POLICY_FILE again: {} → {profiles, principals}; a policy that fails validation is
// refused (errorFailed, naming file, line and field) and the one in force stays.
inline constexpr char methodReloadPolicy[] = "reloadPolicy";

// Error codes.
inline constexpr char errorMalformed[] = "malformed"; // not a JSON object, or fields missing
inline constexpr char errorOversized[] = "oversized";
inline constexpr char errorVersion[] = "version_mismatch";
inline constexpr char errorUnknownMethod[] = "unknown_method";
inline constexpr char errorBadParams[] = "bad_params";
inline constexpr char errorNotFound[] = "not_found";
inline constexpr char errorInvalidValue[] = "invalid_value";
inline constexpr char errorRefused[] = "refused";
inline constexpr char errorFailed[] = "failed";

struct Message
{
    MessageType type = MessageType::Event;
    int version = 0; // Hello
    QString program; // Hello
    QString programVersion; // Hello
    QString name; // Event: the event; Request: the method
    std::optional<qint64> id; // Request, Reply, Error
    QJsonObject body; // Event: data; Request: params; Reply: result
    QString errorCode; // Error
    QString errorMessage; // Error

    static Message hello(const QString &program, const QString &programVersion);
    static Message event(const QString &name, const QJsonObject &data);
    static Message request(qint64 id, const QString &method, const QJsonObject &params = {});
    static Message reply(qint64 id, const QJsonObject &result);
    static Message error(std::optional<qint64> id, const QString &code, const QString &message);
};

// One compact JSON line, '\n' included.
QByteArray encode(const Message &message);
// nullopt and a sentence naming the problem for anything that is not a well-formed message;
// `id`, when given, receives the request id even when the rest is wrong, so that the error
// reply can name it.
std::optional<Message> decode(const QByteArray &line, QString *error,
                              std::optional<qint64> *id = nullptr);

// "" when `hello` can be talked to, else why not (a version mismatch names both versions).
QString checkHello(const Message &hello);

// Splits a byte stream into lines of at most maxLineBytes. A longer line is dropped as it
// arrives (never held whole) and reported once, as an oversized entry, when its end is seen.
class LineSplitter
{
public:
    struct Line
    {
        QByteArray bytes; // without the '\n'
        bool oversized = false;
    };
    explicit LineSplitter(qsizetype maxBytes = maxLineBytes) : m_maxBytes(maxBytes) { }
    QList<Line> feed(const QByteArray &data);

private:
    qsizetype m_maxBytes;
    QByteArray m_partial;
    bool m_discarding = false;
};

} // namespace cmcp::admin

Q_DECLARE_METATYPE(cmcp::admin::Message)
