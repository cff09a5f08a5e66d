// The program files found for an allow-list: programs by name beneath /usr, with the loader,
// the libraries and a script's interpreter each needs.

#include "sandbox/ProgramFiles.h"

#include <algorithm>
#include <QTest>

using namespace cmcp;

class TestProgramFiles : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsProgramsByNameBeneathUsr()
    {
        QString error;
        const std::optional<FoundProgram> ls = ProgramFiles::find(QStringLiteral("ls"), &error);
        QVERIFY2(ls, qPrintable(error));
        QCOMPARE(ls->path, QStringLiteral("/usr/bin/ls"));
        QVERIFY(ls->realPath.startsWith(QLatin1String("/usr/")));
        for (const char *bad : {"", "../bin/ls", "/usr/bin/ls", "no-such-program-here", "."}) {
            QVERIFY2(!ProgramFiles::find(QLatin1String(bad), &error), bad);
            QVERIFY(!error.isEmpty());
        }
        QVERIFY(!ProgramFiles::find(QStringLiteral("no-such-program-here"), &error));
        QVERIFY(error.contains(QLatin1String("no program 'no-such-program-here'")));
    }

    // Each program brings its ELF loader (executable) and its libraries (mappable only).
    void programFilesNameTheLoaderAndTheLibraries()
    {
        QString error;
        ProgramFiles files;
        const std::optional<FoundProgram> ls = ProgramFiles::find(QStringLiteral("ls"), &error);
        QVERIFY(ls);
        QVERIFY2(files.addProgram(ls->realPath, &error), qPrintable(error));
        QCOMPARE(files.executables().size(), 2);
        QCOMPARE(files.executables().first(), ls->realPath);
        QVERIFY(files.executables().last().contains(QLatin1String("ld-linux")));
        const QStringList mappable = files.mappable();
        QVERIFY(std::any_of(mappable.begin(), mappable.end(), [](const QString &path) {
            return path.endsWith(QLatin1String("/libc.so.6"));
        }));
        for (const QString &path : mappable)
            QVERIFY2(path.startsWith(QLatin1String("/usr/")), qPrintable(path));
        // Nothing twice, however many programs share a library.
        const std::optional<FoundProgram> cat = ProgramFiles::find(QStringLiteral("cat"), &error);
        QVERIFY(files.addProgram(cat->realPath, &error));
        QCOMPARE(files.mappable().removeDuplicates(), 0);
        QCOMPARE(files.executables().size(), 3);
    }

    // A #! script needs its interpreter executable too.
    void scriptsBringTheirInterpreter()
    {
        QString error;
        const std::optional<FoundProgram> zgrep =
                ProgramFiles::find(QStringLiteral("zgrep"), &error);
        if (!zgrep)
            QSKIP("no zgrep on this machine");
        ProgramFiles files;
        QVERIFY2(files.addProgram(zgrep->realPath, &error), qPrintable(error));
        QVERIFY(files.executables().contains(zgrep->realPath));
        QVERIFY(files.executables().size() >= 3); // the script, its shell, the loader
    }
};

QTEST_GUILESS_MAIN(TestProgramFiles)
#include "tst_programfiles.moc"
