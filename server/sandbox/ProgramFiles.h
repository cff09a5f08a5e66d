#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// One program found by name: the path its name resolves to (what a "bin" link points at, so the
// link keeps the name) and the real file behind it (what Landlock and exec_paths must name).
struct FoundProgram
{
    QString name; // e.g. "awk"
    QString path; // e.g. /usr/bin/awk
    QString realPath; // e.g. /usr/bin/mawk
};

// The files a set of programs needs to start under the jail's per-file execute rules: each
// program, the interpreter that runs it (the ELF loader, or a script's #! interpreter, with
// its own needs), and every shared library it links, all as real paths beneath /usr. Computed
// once at start-up with the ELF loader's --list, so the jail can name files, not directories:
// a directory would let the loader start any program in it.
class ProgramFiles
{
public:
    // Finds `name` in /usr/bin then /usr/sbin (merged /usr: /bin and /sbin point there).
    // nullopt with a reason when it is not there, is not an executable file, or resolves to a
    // file outside /usr.
    static std::optional<FoundProgram> find(const QString &name, QString *error);

    // find() then addProgram(): the program found, once it and what it needs are added.
    std::optional<FoundProgram> addByName(const QString &name, QString *error);
    // Adds a program and everything it needs to start. False with a reason naming the file
    // when its interpreter or a library cannot be found.
    bool addProgram(const QString &realPath, QString *error);
    // Adds a shared object loaded at run time (a Python extension module) and its libraries;
    // the object itself may be mapped executable but is not a program. Listed with the loader
    // of a program added before.
    bool addLibrary(const QString &realPath, QString *error);

    // Files execve may start: the programs and their interpreters.
    const QStringList &executables() const { return m_executables; }
    // Files that must stay mappable executable: executables() and the libraries.
    QStringList mappable() const { return m_executables + m_libraries; }

private:
    bool addDependencies(const QString &file, QString *error);
    static void appendOnce(QStringList &list, const QString &path);

    QStringList m_executables;
    QStringList m_libraries;
    QString m_loader; // the ELF loader of the programs added so far
};

} // namespace cmcp
