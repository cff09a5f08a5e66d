#include "audit/AuditLog.h"

#include "audit/AuditChain.h"
#include "audit/AuditRecord.h"
#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "common/Settings.h"
#include "posix/WriteAll.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace cmcp {

namespace {

QString systemError(const char *what, const QString &path)
{
    return QStringLiteral("%1 %2: %3").arg(QLatin1String(what), path, errnoText(errno));
}

// The numbers N of the rotated files `<path>.<N>` beside `path`, the highest last.
QList<int> rotatedNumbers(const QString &path)
{
    const QFileInfo info(path);
    const QRegularExpression pattern(
            QStringLiteral("^%1\\.(\\d+)$").arg(QRegularExpression::escape(info.fileName())));
    QList<int> numbers;
    for (const QString &name : info.dir().entryList(QDir::Files)) {
        const QRegularExpressionMatch match = pattern.match(name);
        if (match.hasMatch())
            numbers.append(match.captured(1).toInt());
    }
    std::sort(numbers.begin(), numbers.end());
    return numbers;
}

struct ChainHead
{
    quint64 seq = 0;
    QByteArray hash;
    bool partialTail = false; // the file ends inside a line (a write cut short by a crash)
};

// The last well-formed record of a file. Reads the file from its end in growing chunks: records
// are small, so the common case reads a few KiB of a large file.
std::optional<ChainHead> lastRecordIn(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() == 0)
        return std::nullopt;
    ChainHead head;
    const qint64 size = file.size();
    for (qint64 chunk = 64 * 1024;; chunk *= 4) {
        const qint64 start = std::max<qint64>(0, size - chunk);
        file.seek(start);
        const QByteArray tail = file.readAll();
        head.partialTail = !tail.endsWith('\n');
        QList<QByteArray> lines = tail.split('\n');
        if (start > 0)
            lines.removeFirst(); // it may begin in the middle of a line
        for (qsizetype i = lines.size() - 1; i >= 0; --i) {
            const audit::OpenedRecord record = audit::open(lines.at(i));
            if (record.problem.isEmpty()) {
                head.seq = record.seq;
                head.hash = record.hash;
                return head;
            }
        }
        if (start == 0)
            return head.partialTail ? std::optional<ChainHead>(head) : std::nullopt;
    }
}

} // namespace

AuditOptions AuditOptions::fromSettings(const Settings &settings)
{
    AuditOptions options;
    options.path = settings.text(u"AUDIT_LOG");
    options.maxBytes = settings.integer(u"AUDIT_MAX_MB") * 1024 * 1024;
    options.required = settings.flag(u"AUDIT_REQUIRED");
    return options;
}

AuditLog::AuditLog(AuditOptions options, QObject *parent)
    : QObject(parent),
      m_options(std::move(options)),
      m_lastHash(audit::genesisHash()),
      // The thread starts now and stays: a sync does not wait for a thread's start.
      m_syncThread(std::make_unique<audit::SyncThread>([this](quint64 seq, int syncErrno) {
          QMetaObject::invokeMethod(
                  this, [this, seq, syncErrno] { onSynced(seq, syncErrno); }, Qt::QueuedConnection);
      }))
{
    // A zero timer fires once the loop has handled every event ready now: the calls that end in
    // one pass of the loop share one sync instead of the first starting a sync of its own and
    // the others waiting for the next.
    m_endOfPass.setSingleShot(true);
    m_endOfPass.setInterval(0);
    m_endOfPass.setTimerType(Qt::PreciseTimer);
    connect(&m_endOfPass, &QTimer::timeout, this, &AuditLog::endOfPass);
}

// A sync still running holds the descriptor it syncs and posts its outcome to this object; Qt
// drops events posted to an object that is gone, so waiting for the thread is enough.
AuditLog::~AuditLog()
{
    // A clean stop loses no record: the deferred ones are written (the next start resumes the
    // chain from the file).
    if (m_fd.isValid())
        writeDeferred();
    m_syncThread.reset();
}

bool AuditLog::open(QString *error)
{
    const QString directory = QFileInfo(m_options.path).absolutePath();
    if (!QDir().mkpath(directory)) {
        *error = QStringLiteral("cannot create the audit log directory %1").arg(directory);
        return false;
    }
    if (!resumeChain(error) || !openFile(error))
        return false;
    m_writtenSeq = m_seq;
    m_writtenHash = m_lastHash;
    const QJsonObject opened{
            {QLatin1String("event"), QLatin1String("audit_opened")},
            {QLatin1String("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
            {QLatin1String("pid"), double(QCoreApplication::applicationPid())},
            {QLatin1String("version"), QStringLiteral(CMCP_VERSION)}};
    if (!append(opened)) {
        *error = m_lastError;
        return false;
    }
    spdlog::info("audit: logging every tool call to {} (record {}, rotated at {} bytes{})",
                 m_options.path.toStdString(), m_seq, m_options.maxBytes,
                 m_options.required ? ", required: calls fail when it cannot be written" : "");
    return true;
}

// The chain continues from the last record of the current file or, when that file is empty or
// missing (the daemon stopped right after a rotation), of the most recent rotated file.
bool AuditLog::resumeChain(QString *error)
{
    std::optional<ChainHead> head = lastRecordIn(m_options.path);
    if (!head) {
        const QList<int> rotated = rotatedNumbers(m_options.path);
        if (!rotated.isEmpty())
            head = lastRecordIn(QStringLiteral("%1.%2").arg(m_options.path).arg(rotated.last()));
    }
    if (!head)
        return true;
    if (head->seq > 0) {
        m_seq = head->seq;
        m_lastHash = head->hash;
    }
    if (head->partialTail) {
        // The partial line stays as evidence (the verifier reports it as truncated); ending it
        // keeps the next record on its own line.
        spdlog::error("audit: {} ends with a partial record (a write cut short); it stays in the "
                      "file and the chain continues after it from record {}",
                      m_options.path.toStdString(), m_seq);
        QFile file(m_options.path);
        if (!file.open(QIODevice::Append) || file.write("\n", 1) != 1 || !file.flush()) {
            *error = QStringLiteral("cannot end the partial record of %1: %2")
                             .arg(m_options.path, file.errorString());
            return false;
        }
    }
    return true;
}

bool AuditLog::openFile(QString *error)
{
    // Root appends to it: a symbolic link planted at its name is refused (ELOOP), never followed.
    const QByteArray path = QFile::encodeName(m_options.path);
    m_fd.reset(
            ::open(path.constData(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!m_fd.isValid()) {
        *error = systemError("cannot open the audit log", m_options.path);
        return false;
    }
    // The sync thread's descriptor of this file, which a sync in flight keeps: a rotation may
    // close m_fd while a sync runs. Without one, its syncs fail and say so.
    m_syncThread->setFile(std::make_shared<UniqueFd>(::fcntl(m_fd.get(), F_DUPFD_CLOEXEC, 0)));
    struct stat status
    {
    };
    if (::fstat(m_fd.get(), &status) != 0) {
        *error = systemError("cannot stat the audit log", m_options.path);
        return false;
    }
    m_size = status.st_size;
    // tmpfs and ramfs keep their files in memory only: a regular file's fdatasync has no device
    // to wait for and returns at once. The loop runs it itself rather than waking the sync
    // thread, which costs more than the sync (on a virtual machine, waking a sleeping thread on
    // the other CPU costs tens of microseconds). (A device node on devtmpfs may sync a device.)
    struct statfs fileSystem
    {
    };
    m_syncOnLoop = S_ISREG(status.st_mode) && ::fstatfs(m_fd.get(), &fileSystem) == 0
            && (fileSystem.f_type == TMPFS_MAGIC || fileSystem.f_type == RAMFS_MAGIC);
    return true;
}

bool AuditLog::rotate(QString *error)
{
    const QList<int> rotated = rotatedNumbers(m_options.path);
    const QString target = QStringLiteral("%1.%2")
                                   .arg(m_options.path)
                                   .arg(rotated.isEmpty() ? 1 : rotated.last() + 1);
    // The records written without their own fdatasync go to disk with the file they are in.
    ++m_inlineSyncs;
    if (::fdatasync(m_fd.get()) != 0) {
        *error = systemError("cannot flush the audit log", m_options.path);
        return false;
    }
    if (::rename(QFile::encodeName(m_options.path).constData(),
                 QFile::encodeName(target).constData())
        != 0) {
        *error = systemError("cannot rotate the audit log to", target);
        return false;
    }
    // The rename is durable once the directory is synced.
    fsyncDirectoryAt(AT_FDCWD,
                     QFile::encodeName(QFileInfo(m_options.path).absolutePath()).constData());
    // Not the deferred records: they go into the new file, which the next sync covers.
    m_durableSeq = m_writtenSeq;
    spdlog::info("audit: rotated {} to {} at record {}", m_options.path.toStdString(),
                 target.toStdString(), m_seq);
    return openFile(error);
}

bool AuditLog::writeLine(const QByteArray &bytes, bool durable, QString *error)
{
    const std::size_t written = writeAll(m_fd.get(), bytes.constData(), size_t(bytes.size()));
    if (written < size_t(bytes.size()))
        *error = systemError("cannot write to the audit log", m_options.path);
    if (error->isEmpty() && durable) {
        ++m_inlineSyncs;
        if (::fdatasync(m_fd.get()) != 0)
            *error = systemError("cannot flush the audit log", m_options.path);
    }
    if (!error->isEmpty()) {
        // No half record may stay: the next record would be chained after a line that does not
        // verify. (It fails on a device such as /dev/full, which has nothing to cut.)
        if (written > 0)
            (void)::ftruncate(m_fd.get(), m_size);
        return false;
    }
    m_size += bytes.size();
    return true;
}

bool AuditLog::appendSealed(const Sealer &seal, Write write, QString *error)
{
    audit::SealedRecord &record = m_sealed;
    seal(m_seq + 1, m_lastHash, record);
    record.line += '\n'; // in the room seal() leaves for it
    // Deferred while the file has room for it with the rest: a rotation happens on a write.
    if (write == Write::Deferred
        && m_size + m_deferred.size() + record.line.size() <= m_options.maxBytes) {
        m_deferred += record.line;
        ++m_deferredRecords;
        ++m_seq;
        // Swapped, not shared: the next record's hash is written into the buffer of this one's
        // prev.
        std::swap(m_lastHash, record.hash);
        if (!m_endOfPass.isActive())
            m_endOfPass.start();
        return true;
    }
    // The deferred records go first, in the same write.
    const QByteArray &bytes = m_deferred.isEmpty() ? record.line : (m_deferred += record.line);
    if ((m_size > 0 && m_size + bytes.size() > m_options.maxBytes && !rotate(error))
        || !writeLine(bytes, write == Write::Durable, error)) {
        if (m_deferredRecords > 0)
            loseDeferred(*error);
        return false;
    }
    ++m_seq;
    std::swap(m_lastHash, record.hash);
    m_writtenSeq = m_seq;
    m_writtenHash = m_lastHash;
    m_deferred.resize(0);
    m_deferredRecords = 0;
    if (write == Write::Durable)
        m_durableSeq = m_seq;
    return true;
}

bool AuditLog::writeDeferred()
{
    if (m_deferredRecords == 0)
        return true;
    // No rotation: a record is deferred only while the file has room for every deferred one.
    QString error;
    if (!writeLine(m_deferred, false, &error)) {
        loseDeferred(error);
        return false;
    }
    m_writtenSeq = m_seq;
    m_writtenHash = m_lastHash;
    m_deferred.resize(0);
    m_deferredRecords = 0;
    return true;
}

void AuditLog::loseDeferred(const QString &error)
{
    m_lost += m_deferredRecords;
    spdlog::error("audit: {} ({} finished record(s) lost with it, {} so far{})",
                  error.toStdString(), m_deferredRecords, m_lost,
                  m_options.required ? "; AUDIT_REQUIRED: their calls fail"
                                     : "; AUDIT_REQUIRED is off: their calls go on unrecorded");
    m_lastError = error;
    m_seq = m_writtenSeq;
    m_lastHash = m_writtenHash;
    m_deferred.resize(0);
    m_deferredRecords = 0;
    // Their calls wait for what was written before, and learn why their record is missing; they
    // are released at the end of the pass or with that sync, never from inside this append.
    for (Waiter &waiter : m_waiting) {
        if (waiter.seq > m_writtenSeq) {
            waiter.seq = m_writtenSeq;
            waiter.failure = error;
        }
    }
    if (!m_endOfPass.isActive())
        m_endOfPass.start();
}

bool AuditLog::append(const QJsonObject &fields, bool durable)
{
    return appendWith(
            [&fields](quint64 seq, const QByteArray &prev, audit::SealedRecord &sealed) {
                sealed = audit::seal(fields, seq, prev);
            },
            durable ? Write::Durable : Write::Now);
}

bool AuditLog::append(const audit::RecordFields &fields, bool durable)
{
    return appendWith(
            [&fields](quint64 seq, const QByteArray &prev, audit::SealedRecord &sealed) {
                audit::seal(fields, seq, prev, sealed);
            },
            durable ? Write::Durable : Write::Now);
}

bool AuditLog::appendWith(const Sealer &seal, Write write)
{
    QString error;
    if (!m_fd.isValid()) {
        error = QStringLiteral("the audit log %1 is not open").arg(m_options.path);
    } else if (m_lost > 0) {
        const QJsonObject gap{{QLatin1String("event"), QLatin1String("records_lost")},
                              {QLatin1String("time"),
                               QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                              {QLatin1String("count"), double(m_lost)},
                              {QLatin1String("reason"), lastError()}};
        if (appendSealed(
                    [&gap](quint64 seq, const QByteArray &prev, audit::SealedRecord &sealed) {
                        sealed = audit::seal(gap, seq, prev);
                    },
                    Write::Now, &error))
            m_lost = 0;
    }
    if (error.isEmpty())
        appendSealed(seal, write, &error);
    if (!error.isEmpty()) {
        ++m_lost;
        spdlog::error("audit: {} ({} record(s) lost so far{})", error.toStdString(), m_lost,
                      m_options.required ? "; AUDIT_REQUIRED: the call fails"
                                         : "; AUDIT_REQUIRED is off: the call goes on unrecorded");
        m_lastError = error;
        return false;
    }
    if (m_lost > 0)
        spdlog::warn("audit: writing works again after {} lost record(s)", m_lost);
    m_lost = 0;
    m_lastError.clear();
    return true;
}

QString AuditLog::failClosedReason() const
{
    if (!m_options.required || lastError().isEmpty())
        return {};
    return QStringLiteral("the audit log cannot be written (%1), and AUDIT_REQUIRED refuses calls "
                          "that cannot be recorded")
            .arg(lastError());
}

void AuditLog::whenDurable(std::function<void()> then)
{
    if (m_durableSeq >= m_seq || !m_fd.isValid()) {
        then();
        return;
    }
    m_waiting.push_back(Waiter{m_seq, std::move(then), {}});
    if (m_seq > m_requestedSeq && !m_endOfPass.isActive())
        m_endOfPass.start();
}

void AuditLog::endOfPass()
{
    writeDeferred();
    // Those whose records were lost and are released by what is already on disk.
    settleWaiters(m_durableSeq);
    if (m_syncOnLoop && m_writtenSeq > m_durableSeq && m_writtenSeq > m_requestedSeq) {
        ++m_inlineSyncs;
        const quint64 seq = m_writtenSeq;
        onSynced(seq, ::fdatasync(m_fd.get()) == 0 ? 0 : errno);
        return;
    }
    if (m_writtenSeq > m_requestedSeq && m_writtenSeq > m_durableSeq) {
        m_requestedSeq = m_writtenSeq;
        m_syncThread->request(m_writtenSeq);
    }
}

void AuditLog::onSynced(quint64 syncedSeq, int syncErrno)
{
    if (syncErrno == 0) {
        m_durableSeq = std::max(m_durableSeq, syncedSeq);
        m_syncError.clear();
        settleWaiters(m_durableSeq);
        return;
    }
    // The records are in the file but may not reach the disk: the calls waiting for them are
    // told (and fail closed with AUDIT_REQUIRED), and the next record says how many.
    errno = syncErrno;
    m_syncError = systemError("cannot flush the audit log", m_options.path);
    const quint64 unsynced = syncedSeq - std::min(syncedSeq, m_durableSeq);
    m_lost += unsynced;
    spdlog::error("audit: {} ({} record(s) may not be on disk{})", m_syncError.toStdString(),
                  unsynced,
                  m_options.required ? "; AUDIT_REQUIRED: their calls fail"
                                     : "; AUDIT_REQUIRED is off: their calls go on");
    // Released: their sync is over, and failed.
    settleWaiters(std::max(m_durableSeq, syncedSeq));
}

void AuditLog::settleWaiters(quint64 upTo)
{
    // Settled before the callbacks run: one of them may append and wait again.
    std::vector<Waiter> settled;
    std::vector<Waiter> still;
    for (Waiter &waiter : m_waiting)
        (waiter.seq <= upTo ? settled : still).push_back(std::move(waiter));
    m_waiting = std::move(still);
    for (Waiter &waiter : settled) {
        m_settlingFailure = waiter.failure;
        waiter.then();
    }
    m_settlingFailure.clear();
}

void AuditLog::recordCallStarted(const ToolCallRecord &call)
{
    audit::callStartedRecord(m_fields, call, QDateTime::currentMSecsSinceEpoch());
    append(m_fields, false);
}

// Written, not synced: the server sends the call's result from whenDurable, and a cancelled
// call, which sends none, goes to the disk with the next sync.
void AuditLog::recordCallFinished(const ToolCallRecord &call, const ToolResult *result)
{
    audit::callFinishedRecord(m_fields, call, result, QDateTime::currentMSecsSinceEpoch());
    appendWith([this](quint64 seq, const QByteArray &prev,
                      audit::SealedRecord &sealed) { audit::seal(m_fields, seq, prev, sealed); },
               Write::Deferred);
}

} // namespace cmcp
