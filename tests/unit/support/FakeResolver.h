// A resolver whose answers the test chooses: successive answers per name (the last one repeats),
// to play a rebinding name, and a count of the lookups made.
#pragma once

#include "egress/HostResolver.h"

#include <QHash>
#include <QMetaObject>
#include <QObject>

class FakeResolver : public cmcp::HostResolver
{
public:
    void answer(const QString &host, QList<QList<QHostAddress>> successive)
    {
        m_answers.insert(host, std::move(successive));
    }
    int lookups(const QString &host) const { return m_lookups.value(host); }

    void resolve(const QString &host, QObject *context, Callback callback) override
    {
        const int n = m_lookups[host]++;
        const QList<QList<QHostAddress>> answers = m_answers.value(host);
        QMetaObject::invokeMethod(
                context,
                [=] {
                    if (answers.isEmpty())
                        callback({}, QStringLiteral("cannot resolve %1: Host not found").arg(host));
                    else
                        callback(answers.at(std::min<qsizetype>(n, answers.size() - 1)), {});
                },
                Qt::QueuedConnection);
    }

private:
    QHash<QString, QList<QList<QHostAddress>>> m_answers;
    QHash<QString, int> m_lookups;
};
