#include "transport/StdioTransport.h"

#include "mcp/JsonRpc.h"
#include "mcp/McpServer.h"
#include "posix/ErrnoText.h"

#include <QSocketNotifier>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <sys/uio.h>
#include <unistd.h>

namespace cmcp {

class StdioTransport::LineExchange : public Exchange
{
public:
    explicit LineExchange(StdioTransport &transport) : m_transport(transport) { }
    void sendRelated(const QJsonObject &message) override
    {
        m_transport.writeLine(jsonrpc::serialize(message));
    }
    void complete(const QJsonValue &responses) override
    {
        if (!responses.isUndefined())
            m_transport.writeLine(jsonrpc::serialize(responses));
    }
    void completeSerialized(const QByteArray &responses) override
    {
        m_transport.writeLine(responses);
    }

private:
    StdioTransport &m_transport;
};

StdioTransport::StdioTransport(McpServer &mcp, QObject *parent)
    : QObject(parent),
      m_mcp(mcp),
      m_exchange(std::make_shared<LineExchange>(*this))
{
}

StdioTransport::~StdioTransport()
{
    if (m_session)
        m_mcp.closeSession(m_session->id(), QStringLiteral("stdio transport stopped"));
}

void StdioTransport::start()
{
    m_session = m_mcp.openSession(QStringLiteral("stdio"), this);
    m_notifier = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &StdioTransport::onReadable);
}

void StdioTransport::sendUnrelated(const QJsonObject &message)
{
    writeLine(jsonrpc::serialize(message));
}

void StdioTransport::writeLine(const QByteArray &json)
{
    // The message and its newline in one system call, without copying megabytes to add a byte.
    char newline = '\n';
    iovec parts[2] = {{const_cast<char *>(json.constData()), size_t(json.size())}, {&newline, 1}};
    iovec *part = parts;
    int count = 2;
    while (count > 0) {
        ssize_t written = ::writev(STDOUT_FILENO, part, count);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            spdlog::error("stdout is gone ({}): ending the stdio session",
                          errnoText(errno).toStdString());
            Q_EMIT finished();
            return;
        }
        for (; count > 0 && size_t(written) >= part->iov_len; ++part, --count)
            written -= ssize_t(part->iov_len);
        if (count > 0) {
            part->iov_base = static_cast<char *>(part->iov_base) + written;
            part->iov_len -= size_t(written);
        }
    }
}

void StdioTransport::onReadable()
{
    char chunk[65536];
    const ssize_t got = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) {
        m_notifier->setEnabled(false);
        if (!m_buffer.trimmed().isEmpty() && !m_discardingLongLine)
            handleLine(m_buffer);
        m_buffer.clear();
        spdlog::info("stdin closed: ending the stdio session");
        Q_EMIT finished();
        return;
    }
    // Only the fresh bytes can hold a newline: scanning the whole buffer on every read made a
    // long message cost quadratic time (seconds for one near the limit).
    const qsizetype scanFrom = m_buffer.size();
    m_buffer.append(chunk, got);
    qsizetype newline = m_buffer.indexOf('\n', scanFrom);
    while (newline >= 0) {
        const QByteArray line = m_buffer.left(newline);
        m_buffer.remove(0, newline + 1);
        if (m_discardingLongLine)
            m_discardingLongLine = false;
        else if (!line.trimmed().isEmpty())
            handleLine(line);
        newline = m_buffer.indexOf('\n');
    }
    if (m_buffer.size() > maxLineBytes) {
        spdlog::warn("stdio: a message longer than {} bytes was refused", maxLineBytes);
        writeLine(jsonrpc::serialize(jsonrpc::makeError(QJsonValue::Null, jsonrpc::InvalidRequest,
                                                        QStringLiteral("message too large"))));
        m_buffer.clear();
        m_discardingLongLine = true;
    }
}

void StdioTransport::handleLine(const QByteArray &line)
{
    m_mcp.handlePayload(m_session, jsonrpc::parsePayload(line), m_exchange);
}

} // namespace cmcp
