#include "transfer/TransferTickets.h"

#include "common/Settings.h"
#include "base/UnguessableId.h"
#include "posix/ErrnoText.h"
#include "workspace/RegularFile.h"

#include <QFile>

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

// Each live URL holds its workspace's directory open: one principal may not pile them up.
constexpr int kLivePerPrincipal = 64;

} // namespace

QString TransferTickets::urlPrefix()
{
    return QStringLiteral("/transfer/");
}

void TransferTickets::Ticket::discardTemporary()
{
    if (temporary.isValid()) {
        ::unlinkat(parent.get(), temporaryName.constData(), 0);
        journal->forget(token);
    }
    temporary = UniqueFd();
    received = 0;
    total = -1;
}

TransferTickets::TransferTickets(const Settings &settings, QObject *parent)
    : QObject(parent),
      m_seconds(int(settings.integer(u"TRANSFER_URL_SECONDS"))),
      m_maxBytes(settings.integer(u"TRANSFER_MAX_MB") << 20),
      m_journal(Workspace::sandboxRoot(settings))
{
    m_journal.removeLeftovers();
    // An expired upload's temporary file goes even when nobody asks again.
    m_sweep.setInterval(std::chrono::seconds(m_seconds));
    connect(&m_sweep, &QTimer::timeout, this, &TransferTickets::forgetExpired);
    m_sweep.start();
}

TransferTickets::~TransferTickets()
{
    for (const std::shared_ptr<Ticket> &ticket : std::as_const(m_tickets))
        ticket->discardTemporary();
}

void TransferTickets::forgetExpired()
{
    m_tickets.removeIf([](const auto &entry) {
        // A body arriving keeps its URL until it ends, however long a large one takes.
        if (!entry.value()->expires.hasExpired() || entry.value()->receiving)
            return false;
        entry.value()->discardTemporary();
        return true;
    });
}

std::optional<TransferTickets::Issued>
TransferTickets::issue(const Principal &principal, const Workspace &workspace,
                       std::shared_ptr<const ContainedRoot> root, const WorkspacePath &path,
                       Direction direction, QString *error)
{
    forgetExpired();
    if (m_base.isEmpty()) {
        *error = QStringLiteral("file transfers need the HTTP transport (cmcpd serves stdio "
                                "now)");
        return std::nullopt;
    }
    if (path.isRoot()) {
        *error = QStringLiteral("a transfer needs the path of a file, not the workspace's root");
        return std::nullopt;
    }
    const auto live = std::count_if(m_tickets.cbegin(), m_tickets.cend(), [&](const auto &each) {
        return each->principal == principal && !each->spent;
    });
    if (live >= kLivePerPrincipal) {
        *error = QStringLiteral("principal '%1' has %2 transfer URLs that have not expired, the "
                                "most allowed: use them, or wait TRANSFER_URL_SECONDS")
                         .arg(principal.name())
                         .arg(live);
        return std::nullopt;
    }
    auto ticket = std::make_shared<Ticket>();
    if (direction == Direction::Download) {
        const RegularFile file = RegularFile::openForRead(*root, path);
        if (!file.ok()) {
            *error = file.error();
            return std::nullopt;
        }
    } else {
        ContainedRoot::Opened parent = root->openParent(path, true, &workspace);
        if (!parent.ok()) {
            *error = QStringLiteral("cannot open the directory of %1: %2")
                             .arg(path.display(), errnoText(parent.error));
            return std::nullopt;
        }
        struct stat existing
        {
        };
        if (::fstatat(parent.fd.get(), QFile::encodeName(path.name()).constData(), &existing,
                      AT_SYMLINK_NOFOLLOW)
                    == 0
            && !S_ISREG(existing.st_mode)) {
            *error = QStringLiteral("%1 exists and is not a regular file").arg(path.display());
            return std::nullopt;
        }
        ticket->parent = std::move(parent.fd);
    }
    const QString token = unguessableId("tr_");
    ticket->principal = principal;
    ticket->workspace = workspace;
    ticket->root = std::move(root);
    ticket->path = path;
    ticket->direction = direction;
    ticket->expires = QDeadlineTimer(std::chrono::seconds(m_seconds));
    ticket->temporaryName = UploadJournal::temporaryName(token);
    ticket->journal = &m_journal;
    ticket->token = token;
    m_tickets.insert(token, ticket);
    const QString urlPath = urlPrefix() + token;
    return Issued{urlPath, m_base + urlPath, m_seconds};
}

std::variant<TransferTickets::Refusal, std::shared_ptr<TransferTickets::Ticket>>
TransferTickets::find(const QString &token, bool upload, const Principal &principal)
{
    forgetExpired();
    std::shared_ptr<Ticket> ticket = m_tickets.value(token);
    // Another principal's ticket answers as one that never was.
    if (!ticket || !(ticket->principal == principal))
        return Refusal::Unknown;
    if (ticket->spent)
        return Refusal::Spent;
    if (ticket->direction == Direction::Download && upload)
        return Refusal::DownloadOnly;
    if (ticket->direction == Direction::Upload && !upload)
        return Refusal::UploadOnly;
    return ticket;
}

} // namespace cmcp
