#include "sandbox/ProgramFiles.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>

#include <elf.h>

namespace cmcp {

namespace {

constexpr int kLoaderTimeoutMs = 10000;
// A chain of #! interpreters deeper than this is a loop or a mistake.
constexpr int kMaxScriptDepth = 4;

bool beneathUsr(const QString &path)
{
    return path.startsWith(QLatin1String("/usr/"));
}

QString realPathBeneathUsr(const QString &path, QString *error)
{
    const QString real = QFileInfo(path).canonicalFilePath();
    if (real.isEmpty()) {
        *error = QStringLiteral("%1 does not exist").arg(path);
        return {};
    }
    if (!beneathUsr(real)) {
        *error = QStringLiteral("%1 resolves to %2, outside /usr (the jail's root offers only "
                                "/usr)")
                         .arg(path, real);
        return {};
    }
    return real;
}

struct ElfFile
{
    QString interpreter; // PT_INTERP: the loader a program names; empty for shared objects
    bool dynamic = false; // has a PT_DYNAMIC segment: it links shared libraries
};

// What the program headers of a 64-bit ELF file say; nullopt for anything else.
std::optional<ElfFile> readElf(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    Elf64_Ehdr header{};
    if (file.read(reinterpret_cast<char *>(&header), sizeof header) != sizeof header
        || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64
        || header.e_phentsize != sizeof(Elf64_Phdr))
        return std::nullopt;
    ElfFile elf;
    for (int i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr segment{};
        if (!file.seek(qint64(header.e_phoff + i * sizeof segment))
            || file.read(reinterpret_cast<char *>(&segment), sizeof segment) != sizeof segment)
            return std::nullopt;
        if (segment.p_type == PT_DYNAMIC)
            elf.dynamic = true;
        if (segment.p_type != PT_INTERP)
            continue;
        const qint64 at = file.pos();
        if (segment.p_filesz == 0 || segment.p_filesz > 4096
            || !file.seek(qint64(segment.p_offset)))
            return std::nullopt;
        elf.interpreter =
                QString::fromLocal8Bit(file.read(qint64(segment.p_filesz))).section(QChar(0), 0, 0);
        file.seek(at);
    }
    return elf;
}

// The interpreter of a "#!" script, or empty when the file does not start with "#!".
QString scriptInterpreter(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray line = file.readLine(256);
    if (!line.startsWith("#!"))
        return {};
    return QString::fromLocal8Bit(line.mid(2).trimmed()).section(QLatin1Char(' '), 0, 0);
}

} // namespace

std::optional<FoundProgram> ProgramFiles::find(const QString &name, QString *error)
{
    if (name.isEmpty() || name.contains(QLatin1Char('/')) || name == QLatin1String(".")
        || name == QLatin1String("..")) {
        *error = QStringLiteral("'%1' is not a program name").arg(name);
        return std::nullopt;
    }
    for (const char *directory : {"/usr/bin/", "/usr/sbin/"}) {
        const QString path = QLatin1String(directory) + name;
        const QFileInfo info(path);
        if (!info.exists())
            continue;
        if (!info.isFile() || !info.isExecutable()) {
            *error = QStringLiteral("%1 is not an executable file").arg(path);
            return std::nullopt;
        }
        const QString real = realPathBeneathUsr(path, error);
        if (real.isEmpty())
            return std::nullopt;
        return FoundProgram{name, path, real};
    }
    *error = QStringLiteral("no program '%1' in /usr/bin or /usr/sbin").arg(name);
    return std::nullopt;
}

std::optional<FoundProgram> ProgramFiles::addByName(const QString &name, QString *error)
{
    std::optional<FoundProgram> program = find(name, error);
    if (!program || !addProgram(program->realPath, error))
        return std::nullopt;
    return program;
}

bool ProgramFiles::addProgram(const QString &realPath, QString *error)
{
    QString program = realPath;
    for (int depth = 0; depth < kMaxScriptDepth; ++depth) {
        appendOnce(m_executables, program);
        const QString interpreter = scriptInterpreter(program);
        if (interpreter.isEmpty())
            return addDependencies(program, error);
        const QString real = realPathBeneathUsr(interpreter, error);
        if (real.isEmpty()) {
            error->prepend(QStringLiteral("the interpreter of %1: ").arg(program));
            return false;
        }
        program = real;
    }
    *error = QStringLiteral("%1: more than %2 nested #! interpreters")
                     .arg(realPath)
                     .arg(kMaxScriptDepth);
    return false;
}

bool ProgramFiles::addLibrary(const QString &realPath, QString *error)
{
    appendOnce(m_libraries, realPath);
    return addDependencies(realPath, error);
}

// The loader lists what it would map, as "name => /path (0x...)" for libraries and
// "/path (0x...)" for itself; the vDSO has no path.
bool ProgramFiles::addDependencies(const QString &file, QString *error)
{
    const std::optional<ElfFile> elf = readElf(file);
    if (!elf) {
        *error = QStringLiteral("%1 is neither an ELF file nor a #! script").arg(file);
        return false;
    }
    if (!elf->dynamic)
        return true; // statically linked: nothing else to map
    // A program names its loader; a shared object is listed by the loader its programs use.
    QString loader;
    if (!elf->interpreter.isEmpty()) {
        loader = realPathBeneathUsr(elf->interpreter, error);
        if (loader.isEmpty())
            return false;
        appendOnce(m_executables, loader);
        m_loader = loader;
    } else if (m_loader.isEmpty()) {
        *error = QStringLiteral("%1: a shared object, but no program named a loader before it")
                         .arg(file);
        return false;
    } else {
        loader = m_loader;
    }

    QProcess list;
    list.setProcessEnvironment(QProcessEnvironment()); // no LD_LIBRARY_PATH of the daemon's
    list.start(loader, {QStringLiteral("--list"), file});
    if (!list.waitForFinished(kLoaderTimeoutMs) || list.exitStatus() != QProcess::NormalExit
        || list.exitCode() != 0) {
        *error = QStringLiteral("%1 --list %2 failed: %3")
                         .arg(loader, file,
                              QString::fromLocal8Bit(list.readAllStandardError()).trimmed());
        return false;
    }
    static const QRegularExpression line(QStringLiteral(R"(^\s*(\S+)(?:\s+=>\s+(\S+))?\s+\(0x)"));
    for (const QString &text : QString::fromLocal8Bit(list.readAllStandardOutput()).split(u'\n')) {
        if (text.contains(QLatin1String("=> not found"))) {
            *error = QStringLiteral("%1 needs a library that is not installed: %2")
                             .arg(file, text.trimmed());
            return false;
        }
        const QRegularExpressionMatch match = line.match(text);
        if (!match.hasMatch())
            continue;
        const QString path = match.captured(2).isEmpty() ? match.captured(1) : match.captured(2);
        if (!path.startsWith(QLatin1Char('/')))
            continue; // the vDSO
        const QString real = realPathBeneathUsr(path, error);
        if (real.isEmpty())
            return false;
        if (real != loader)
            appendOnce(m_libraries, real);
    }
    return true;
}

void ProgramFiles::appendOnce(QStringList &list, const QString &path)
{
    if (!list.contains(path))
        list.append(path);
}

} // namespace cmcp
