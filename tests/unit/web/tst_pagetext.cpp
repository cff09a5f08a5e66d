// What web_scrape does with a body before parsing it (its kind, its encoding), and the URL
// resolution its Markdown links use (RFC 3986's own examples).

#include "web/PageText.h"
#include "html/UrlResolution.h"

#include <QTest>

using namespace cmcp;

class TestPageText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void resolvesLikeRfc3986_data()
    {
        QTest::addColumn<QString>("reference");
        QTest::addColumn<QString>("expected");
        // RFC 3986, 5.4.1 and 5.4.2, against http://a/b/c/d;p?q.
        const QList<QPair<const char *, const char *>> cases = {
                {"g:h", "g:h"},
                {"g", "http://a/b/c/g"},
                {"./g", "http://a/b/c/g"},
                {"g/", "http://a/b/c/g/"},
                {"/g", "http://a/g"},
                {"//g", "http://g"},
                {"?y", "http://a/b/c/d;p?y"},
                {"g?y", "http://a/b/c/g?y"},
                {"#s", "http://a/b/c/d;p?q#s"},
                {"g#s", "http://a/b/c/g#s"},
                {"g?y#s", "http://a/b/c/g?y#s"},
                {";x", "http://a/b/c/;x"},
                {"g;x", "http://a/b/c/g;x"},
                {"g;x?y#s", "http://a/b/c/g;x?y#s"},
                {"", "http://a/b/c/d;p?q"},
                {".", "http://a/b/c/"},
                {"./", "http://a/b/c/"},
                {"..", "http://a/b/"},
                {"../", "http://a/b/"},
                {"../g", "http://a/b/g"},
                {"../..", "http://a/"},
                {"../../", "http://a/"},
                {"../../g", "http://a/g"},
                {"../../../g", "http://a/g"},
                {"../../../../g", "http://a/g"},
                {"/./g", "http://a/g"},
                {"/../g", "http://a/g"},
                {"g.", "http://a/b/c/g."},
                {".g", "http://a/b/c/.g"},
                {"g..", "http://a/b/c/g.."},
                {"..g", "http://a/b/c/..g"},
                {"./../g", "http://a/b/g"},
                {"./g/.", "http://a/b/c/g/"},
                {"g/./h", "http://a/b/c/g/h"},
                {"g/../h", "http://a/b/c/h"},
                {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
                {"g;x=1/../y", "http://a/b/c/y"},
                {"g?y/./x", "http://a/b/c/g?y/./x"},
                {"g#s/../x", "http://a/b/c/g#s/../x"},
                {"  g  ", "http://a/b/c/g"},
        };
        for (const auto &[reference, expected] : cases)
            QTest::newRow(reference)
                    << QString::fromLatin1(reference) << QString::fromLatin1(expected);
    }

    void resolvesLikeRfc3986()
    {
        QFETCH(QString, reference);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(
                         html::resolveUrl("http://a/b/c/d;p?q", reference.toStdString())),
                 expected);
    }

    void bodyKinds()
    {
        QCOMPARE(bodyKind("text/html; charset=utf-8", "<p>x"), BodyKind::Html);
        QCOMPARE(bodyKind("application/xhtml+xml", "<html/>"), BodyKind::Html);
        QCOMPARE(bodyKind("text/plain", "<p>x"), BodyKind::Text);
        QCOMPARE(bodyKind("application/json", "{}"), BodyKind::Text);
        QCOMPARE(bodyKind("application/ld+json", "{}"), BodyKind::Text);
        QCOMPARE(bodyKind("image/png", "\x89PNG"), BodyKind::Binary);
        QCOMPARE(bodyKind("application/pdf", "%PDF"), BodyKind::Binary);
        // No type: the bytes decide.
        QCOMPARE(bodyKind("", "<!DOCTYPE html><title>x</title>"), BodyKind::Html);
        QCOMPARE(bodyKind("", "just words"), BodyKind::Text);
        QCOMPARE(bodyKind("application/octet-stream", QByteArray("ab\0cd", 5)), BodyKind::Binary);
    }

    void decodesTheDeclaredEncoding()
    {
        const QByteArray latin1("caf\xe9 \x80", 6);
        QCOMPARE(QString::fromUtf8(
                         bodyAsUtf8("text/html; charset=windows-1252", latin1, BodyKind::Html)),
                 QStringLiteral("café €"));
        QCOMPARE(QString::fromUtf8(bodyAsUtf8("text/html", "<meta charset=\"ISO-8859-1\">caf\xe9",
                                              BodyKind::Html)),
                 QStringLiteral("<meta charset=\"ISO-8859-1\">café"));
        QCOMPARE(QString::fromUtf8(bodyAsUtf8("text/html",
                                              "<meta http-equiv=Content-Type content=\"text/html; "
                                              "charset=koi8-r\">\xc1",
                                              BodyKind::Html))
                         .right(1),
                 QStringLiteral("а"));
        // A byte order mark wins over everything else.
        QCOMPARE(bodyAsUtf8("text/html; charset=windows-1252",
                            "\xef\xbb\xbf"
                            "caf\xc3\xa9",
                            BodyKind::Html),
                 QByteArray("caf\xc3\xa9"));
        QCOMPARE(QString::fromUtf8(bodyAsUtf8("", QByteArray("\xff\xfeh\0i\0", 6), BodyKind::Text)),
                 QStringLiteral("hi"));
        // Undeclared: UTF-8 when it is UTF-8, windows-1252 as browsers guess when it is not.
        QCOMPARE(bodyAsUtf8("text/html", "caf\xc3\xa9", BodyKind::Html), QByteArray("caf\xc3\xa9"));
        QCOMPARE(QString::fromUtf8(bodyAsUtf8("text/html", "caf\xe9", BodyKind::Html)),
                 QStringLiteral("café"));
    }
};

QTEST_GUILESS_MAIN(TestPageText)
#include "tst_pagetext.moc"
