#include "mcp/SchemaValidator.h"

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QRegularExpression>
#include <QStringList>
#include <QUrl>

#include <cmath>
#include <limits>
#include <optional>

using namespace Qt::Literals::StringLiterals;

namespace cmcp {
namespace {

// Bounds the recursion whatever the schema and the value look like. It counts subschema
// evaluations, not value levels, so a recursive schema allows fewer value levels than this.
constexpr int kMaxDepth = 128;
// Bounds the total work: allOf/anyOf/oneOf over a recursive schema would otherwise make the
// cost exponential in the depth of the value, and the value is the client's to choose. A step
// costs about a microsecond, so the worst case holds the event loop for a fraction of a second,
// while a plain value of 100,000 items still passes.
constexpr qint64 kMaxSteps = 200'000;
constexpr qsizetype kMaxRenderedChars = 60;
// Alternatives' reasons are nested into anyOf/oneOf messages; bounding each keeps nested
// compositions from multiplying the length of the message.
constexpr qsizetype kMaxReasonChars = 160;
constexpr qsizetype kMaxListedItems = 30;
constexpr qsizetype kUnbounded = std::numeric_limits<qsizetype>::max() - 1;

enum class FailureKind {
    Rule,
    // Told apart so that anyOf/oneOf can find the one alternative that fits the value's type.
    TypeMismatch,
    // The check could not finish (nesting, work limit, broken schema): no composition keyword
    // may turn this into a pass, least of all `not`.
    Fatal,
};

struct Failure
{
    QString path;
    QString rule;
    FailureKind kind = FailureKind::Rule;
    // For a TypeMismatch, the types wanted ("a string", "null"), so that alternatives that all
    // fail on type can be summed up as one "must be a string or null".
    QStringList expectedTypes;

    QString message() const { return path.isEmpty() ? rule : path + u": "_s + rule; }
};

using Result = std::optional<Failure>;

struct Location
{
    QString path;
    int depth = 0;
    // The $refs followed since the last step into the value: meeting one again is a cycle.
    QStringList refsFollowedHere;

    Location into(const QString &segment) const
    {
        const bool dropDot = path.isEmpty() && segment.startsWith(u'.');
        return {dropDot ? segment.mid(1) : path + segment, depth + 1, {}};
    }
    Location same() const { return {path, depth + 1, refsFollowedHere}; }
};

Failure fail(const Location &at, const QString &rule, FailureKind kind = FailureKind::Rule)
{
    return {at.path, rule, kind, {}};
}

Failure invalidSchema(const Location &at, const QString &why)
{
    return {at.path, u"invalid schema: "_s + why, FailureKind::Fatal, {}};
}

// ---- rendering values for messages and comparing them ----

std::optional<qint64> exactInteger(const QJsonValue &value)
{
    if (!value.isDouble())
        return std::nullopt;
    // toInteger() answers the default both for a real 0 and for a non-integral value.
    const qint64 integer = value.toInteger(0);
    if (integer != 0 || value.toDouble() == 0.0)
        return integer;
    return std::nullopt;
}

bool isIntegral(const QJsonValue &value)
{
    if (exactInteger(value))
        return true;
    const double number = value.toDouble();
    return value.isDouble() && std::isfinite(number) && std::trunc(number) == number;
}

// Integers a JSON number holds exactly (RFC 8259's interoperable range, ±2^53). Beyond it a
// reader that converts to a 64-bit integer meets values it cannot hold (1e308) or rounds
// (9007199254740993): refused as integers rather than passed on to that conversion.
constexpr double kLargestExactInteger = 9007199254740992.0; // 2^53

bool isSafeInteger(const QJsonValue &value)
{
    // A number parsed as a 64-bit integer is compared as one: 2^53 + 1 rounds to 2^53 as a double.
    if (const std::optional<qint64> integer = exactInteger(value))
        return *integer >= -qint64(kLargestExactInteger)
                && *integer <= qint64(kLargestExactInteger);
    return isIntegral(value) && std::fabs(value.toDouble()) <= kLargestExactInteger;
}

QString numberText(const QJsonValue &value)
{
    if (const std::optional<qint64> integer = exactInteger(value))
        return QString::number(*integer);
    return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
}

int compareNumbers(const QJsonValue &a, const QJsonValue &b)
{
    const std::optional<qint64> integerA = exactInteger(a);
    const std::optional<qint64> integerB = exactInteger(b);
    if (integerA && integerB)
        return (*integerA > *integerB) - (*integerA < *integerB);
    const double numberA = a.toDouble();
    const double numberB = b.toDouble();
    return (numberA > numberB) - (numberA < numberB);
}

// Stops once `out` is longer than `stopAt`, so a huge string costs no more than a short one.
void appendEscaped(QString &out, QStringView text, qsizetype stopAt)
{
    for (const QChar c : text) {
        if (out.size() > stopAt)
            return;
        switch (c.unicode()) {
        case u'"':
            out += u"\\\""_s;
            break;
        case u'\\':
            out += u"\\\\"_s;
            break;
        case u'\n':
            out += u"\\n"_s;
            break;
        case u'\r':
            out += u"\\r"_s;
            break;
        case u'\t':
            out += u"\\t"_s;
            break;
        default:
            if (c.unicode() < 0x20)
                out += u"\\u%1"_s.arg(int(c.unicode()), 4, 16, QChar(u'0'));
            else
                out += c;
        }
    }
}

// Writes `value` as compact JSON with object keys in sorted order (QJsonObject keeps them so)
// and numbers in one spelling, so that equal JSON values give equal text. Returns false when
// the value is nested deeper than kMaxDepth; the output budget `stopAt` ends the walk early.
bool appendJson(QString &out, const QJsonValue &value, qsizetype stopAt, int depth = 0)
{
    if (depth >= kMaxDepth)
        return false;
    if (out.size() > stopAt)
        return true;
    switch (value.type()) {
    case QJsonValue::Null:
        out += u"null"_s;
        return true;
    case QJsonValue::Bool:
        out += value.toBool() ? u"true"_s : u"false"_s;
        return true;
    case QJsonValue::Double:
        out += numberText(value);
        return true;
    case QJsonValue::Undefined:
        out += u"undefined"_s;
        return true;
    case QJsonValue::String:
        out += u'"';
        appendEscaped(out, value.toString(), stopAt);
        out += u'"';
        return true;
    case QJsonValue::Array: {
        const QJsonArray array = value.toArray();
        out += u'[';
        for (qsizetype i = 0; i < array.size() && out.size() <= stopAt; ++i) {
            if (i > 0)
                out += u',';
            if (!appendJson(out, array.at(i), stopAt, depth + 1))
                return false;
        }
        out += u']';
        return true;
    }
    case QJsonValue::Object: {
        const QJsonObject object = value.toObject();
        out += u'{';
        for (auto it = object.begin(); it != object.end() && out.size() <= stopAt; ++it) {
            if (it != object.begin())
                out += u',';
            out += u'"';
            appendEscaped(out, it.key(), stopAt);
            out += u"\":"_s;
            if (!appendJson(out, it.value(), stopAt, depth + 1))
                return false;
        }
        out += u'}';
        return true;
    }
    }
    return true;
}

std::optional<QString> canonical(const QJsonValue &value)
{
    QString text;
    if (!appendJson(text, value, kUnbounded))
        return std::nullopt;
    return text;
}

QString truncated(const QString &text, qsizetype maxChars)
{
    if (text.size() <= maxChars)
        return text;
    qsizetype cut = maxChars;
    if (text.at(cut - 1).isHighSurrogate())
        --cut;
    return text.left(cut) + u"..."_s;
}

QString render(const QJsonValue &value)
{
    QString text;
    appendJson(text, value, kMaxRenderedChars);
    return truncated(text, kMaxRenderedChars);
}

QString kindOf(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return u"null"_s;
    case QJsonValue::Bool:
        return u"boolean"_s;
    case QJsonValue::Double:
        return isIntegral(value) ? u"integer"_s : u"number"_s;
    case QJsonValue::String:
        return u"string"_s;
    case QJsonValue::Array:
        return u"array"_s;
    case QJsonValue::Object:
        return u"object"_s;
    case QJsonValue::Undefined:
        break;
    }
    return u"nothing"_s;
}

QString describeValue(const QJsonValue &value)
{
    if (value.isNull() || value.isUndefined())
        return kindOf(value);
    return kindOf(value) + u' ' + render(value);
}

// Property names come from the client: escaped and shortened before they reach a message.
QString quotedName(const QString &name)
{
    QString escaped;
    appendEscaped(escaped, name, kMaxRenderedChars);
    return u'\'' + truncated(escaped, kMaxRenderedChars) + u'\'';
}

QString propertySegment(const QString &name)
{
    bool plain = !name.isEmpty() && name.size() <= kMaxRenderedChars;
    for (qsizetype i = 0; plain && i < name.size(); ++i) {
        const char16_t c = name.at(i).unicode();
        const bool letter = (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'_';
        const bool digitOrDash = (c >= u'0' && c <= u'9') || c == u'-';
        plain = letter || (i > 0 && digitOrDash);
    }
    if (plain)
        return u'.' + name;
    return u'[' + render(QJsonValue(name)) + u']';
}

QString joinList(const QStringList &items, const QString &conjunction)
{
    if (items.size() <= 1)
        return items.join(QString());
    return items.first(items.size() - 1).join(u", "_s) + u' ' + conjunction + u' ' + items.last();
}

QString countOf(qint64 count, const QString &singular, const QString &plural)
{
    return QString::number(count) + u' ' + (count == 1 ? singular : plural);
}

qsizetype codePointCount(QStringView text)
{
    qsizetype count = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate())
            ++i;
        ++count;
    }
    return count;
}

// ECMA-262 `$` (without the m flag) matches only at the very end of the input, PCRE's also
// before a final newline, which would let "name\n" through "^[a-z]+$".
QString pcreFromEcma(const QString &pattern)
{
    QString out;
    out.reserve(pattern.size() + 8);
    bool inClass = false;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern.at(i);
        if (c == u'\\' && i + 1 < pattern.size()) {
            out += c;
            out += pattern.at(++i);
            continue;
        }
        if (inClass) {
            inClass = c != u']';
        } else if (c == u'[') {
            inClass = true;
        } else if (c == u'$') {
            out += u"\\z"_s;
            continue;
        }
        out += c;
    }
    return out;
}

const QStringList &knownTypes()
{
    static const QStringList types = {u"null"_s,   u"boolean"_s, u"object"_s, u"array"_s,
                                      u"number"_s, u"integer"_s, u"string"_s};
    return types;
}

bool hasType(const QJsonValue &value, const QString &type)
{
    if (type == u"integer")
        return value.isDouble() && isSafeInteger(value);
    if (type == u"number")
        return value.isDouble();
    if (type == u"string")
        return value.isString();
    if (type == u"boolean")
        return value.isBool();
    if (type == u"object")
        return value.isObject();
    if (type == u"array")
        return value.isArray();
    return type == u"null" && value.isNull();
}

QString withArticle(const QString &type)
{
    if (type == u"null")
        return type;
    const bool vowel = type == u"integer" || type == u"object" || type == u"array";
    return (vowel ? u"an "_s : u"a "_s) + type;
}

// Reads a keyword whose value must be a non-negative integer (minLength, maxItems...).
Result readCount(const QJsonObject &schema, const QString &keyword, const Location &at,
                 std::optional<qint64> &count)
{
    const QJsonValue raw = schema.value(keyword);
    if (raw.isUndefined())
        return std::nullopt;
    const std::optional<qint64> number = exactInteger(raw);
    if (!number || *number < 0)
        return invalidSchema(at, u"'%1' must be a non-negative integer"_s.arg(keyword));
    count = number;
    return std::nullopt;
}

// Reads anyOf/oneOf/allOf, which must be non-empty arrays of schemas.
Result readAlternatives(const QJsonObject &schema, const QString &keyword, const Location &at,
                        QJsonArray &alternatives)
{
    const QJsonValue raw = schema.value(keyword);
    if (raw.isUndefined())
        return std::nullopt;
    if (!raw.isArray() || raw.toArray().isEmpty())
        return invalidSchema(at, u"'%1' must be a non-empty array of schemas"_s.arg(keyword));
    alternatives = raw.toArray();
    return std::nullopt;
}

Failure typeMismatch(const Location &at, QStringList expectedTypes, const QJsonValue &value)
{
    expectedTypes.removeDuplicates();
    const QString rule =
            u"must be %1, got %2"_s.arg(joinList(expectedTypes, u"or"_s), describeValue(value));
    return {at.path, rule, FailureKind::TypeMismatch, expectedTypes};
}

// When no alternative has the value's type, the types they wanted are the answer; when exactly
// one has, its complaint is the precise one; otherwise every alternative's reason is listed,
// since any of them may be what the client meant.
Failure noAlternativeMatched(const Location &at, const QJsonValue &value,
                             const QList<Failure> &failures, const QString &summary)
{
    QList<Failure> relevant;
    QStringList expectedTypes;
    for (const Failure &failure : failures) {
        if (failure.kind == FailureKind::TypeMismatch && failure.path == at.path)
            expectedTypes.append(failure.expectedTypes);
        else
            relevant.append(failure);
    }
    if (relevant.isEmpty())
        return typeMismatch(at, expectedTypes, value);
    if (relevant.size() == 1)
        return relevant.first();
    QStringList reasons;
    for (qsizetype i = 0; i < failures.size(); ++i) {
        const Failure &failure = failures.at(i);
        const QString reason = failure.path == at.path ? failure.rule : failure.message();
        reasons.append(u"%1: %2"_s.arg(i + 1).arg(truncated(reason, kMaxReasonChars)));
    }
    return fail(at, u"%1 (%2)"_s.arg(summary, reasons.join(u"; "_s)));
}

// ---- the walk ----

class Validation
{
public:
    explicit Validation(const QJsonObject &root) : m_root(root) { }

    Result check(const QJsonValue &schema, const QJsonValue &value, const Location &at);

private:
    using Check = Result (Validation::*)(const QJsonObject &, const QJsonValue &, const Location &);

    Result checkType(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkConstAndEnum(const QJsonObject &schema, const QJsonValue &value,
                             const Location &at);
    Result checkRef(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkNumber(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkString(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkArray(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkObject(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkAllOf(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkAnyOf(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkOneOf(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkNot(const QJsonObject &schema, const QJsonValue &value, const Location &at);
    Result checkCondition(const QJsonObject &schema, const QJsonValue &value, const Location &at);

    std::optional<QJsonValue> resolve(const QString &ref) const;
    const QRegularExpression &compiled(const QString &pattern);

    static constexpr Check kChecks[] = {
            &Validation::checkType,   &Validation::checkConstAndEnum, &Validation::checkRef,
            &Validation::checkNumber, &Validation::checkString,       &Validation::checkArray,
            &Validation::checkObject, &Validation::checkAllOf,        &Validation::checkAnyOf,
            &Validation::checkOneOf,  &Validation::checkNot,          &Validation::checkCondition,
    };

    const QJsonObject m_root;
    qint64 m_steps = 0;
    QHash<QString, QRegularExpression> m_patterns;
};

Result Validation::check(const QJsonValue &schema, const QJsonValue &value, const Location &at)
{
    if (at.depth >= kMaxDepth)
        return fail(at, u"too deeply nested (more than %1 levels)"_s.arg(kMaxDepth),
                    FailureKind::Fatal);
    if (++m_steps > kMaxSteps)
        return fail(at, u"too large or complex to validate"_s, FailureKind::Fatal);
    if (schema.isBool())
        return schema.toBool() ? Result() : fail(at, u"is not allowed"_s);
    if (!schema.isObject())
        return invalidSchema(
                at, u"a schema must be an object or a boolean, got %1"_s.arg(render(schema)));
    const QJsonObject object = schema.toObject();
    for (const Check check : kChecks) {
        if (Result failure = (this->*check)(object, value, at))
            return failure;
    }
    return std::nullopt;
}

Result Validation::checkType(const QJsonObject &schema, const QJsonValue &value, const Location &at)
{
    const QJsonValue raw = schema.value(u"type"_s);
    if (raw.isUndefined())
        return std::nullopt;
    QStringList types;
    if (raw.isString()) {
        types.append(raw.toString());
    } else if (raw.isArray()) {
        for (const QJsonValue &entry : raw.toArray())
            types.append(entry.toString());
    }
    if (types.isEmpty())
        return invalidSchema(at, u"'type' must be a type name or a non-empty array of them"_s);
    QStringList described;
    for (const QString &type : types) {
        if (!knownTypes().contains(type))
            return invalidSchema(at, u"unknown type %1"_s.arg(render(QJsonValue(type))));
        if (hasType(value, type))
            return std::nullopt;
        described.append(withArticle(type));
    }
    if (types.contains(u"integer"_s) && isIntegral(value))
        return fail(at, u"must be an integer from -2^53 to 2^53, got %1"_s.arg(numberText(value)));
    return typeMismatch(at, described, value);
}

Result Validation::checkConstAndEnum(const QJsonObject &schema, const QJsonValue &value,
                                     const Location &at)
{
    const QJsonValue constant = schema.value(u"const"_s);
    const QJsonValue options = schema.value(u"enum"_s);
    if (constant.isUndefined() && options.isUndefined())
        return std::nullopt;
    if (!options.isUndefined() && !options.isArray())
        return invalidSchema(at, u"'enum' must be an array"_s);
    const std::optional<QString> key = canonical(value);
    if (!key)
        return fail(at, u"too deeply nested (more than %1 levels)"_s.arg(kMaxDepth),
                    FailureKind::Fatal);
    if (!constant.isUndefined() && canonical(constant) != key)
        return fail(at, u"must be %1, got %2"_s.arg(render(constant), render(value)));
    if (options.isUndefined())
        return std::nullopt;
    const QJsonArray allowed = options.toArray();
    QStringList listed;
    for (const QJsonValue &option : allowed) {
        if (canonical(option) == key)
            return std::nullopt;
        if (listed.size() < kMaxListedItems)
            listed.append(render(option));
    }
    if (allowed.size() > kMaxListedItems)
        listed.append(u"..."_s);
    if (listed.isEmpty())
        return fail(at, u"is not allowed (the schema's enum is empty)"_s);
    return fail(at, u"must be one of %1, got %2"_s.arg(listed.join(u", "_s), render(value)));
}

Result Validation::checkRef(const QJsonObject &schema, const QJsonValue &value, const Location &at)
{
    const QJsonValue raw = schema.value(u"$ref"_s);
    if (raw.isUndefined())
        return std::nullopt;
    if (!raw.isString())
        return invalidSchema(at, u"'$ref' must be a string"_s);
    const QString ref = raw.toString();
    if (at.refsFollowedHere.contains(ref))
        return invalidSchema(at, u"$ref cycle through %1"_s.arg(render(raw)));
    const std::optional<QJsonValue> target = resolve(ref);
    if (!target)
        return invalidSchema(
                at,
                u"cannot resolve $ref %1 (only local JSON pointers such as \"#/$defs/name\" are supported)"_s
                        .arg(render(raw)));
    Location next = at.same();
    next.refsFollowedHere.append(ref);
    return check(*target, value, next);
}

Result Validation::checkNumber(const QJsonObject &schema, const QJsonValue &value,
                               const Location &at)
{
    if (!value.isDouble())
        return std::nullopt;
    const auto checkBound = [&](const QString &keyword, bool lower, bool exclusive) -> Result {
        const QJsonValue bound = schema.value(keyword);
        if (bound.isUndefined())
            return std::nullopt;
        if (!bound.isDouble())
            return invalidSchema(at, u"'%1' must be a number"_s.arg(keyword));
        const int order = compareNumbers(value, bound);
        const bool holds =
                lower ? (exclusive ? order > 0 : order >= 0) : (exclusive ? order < 0 : order <= 0);
        if (holds)
            return std::nullopt;
        const QString relation = lower ? (exclusive ? u"greater than"_s : u"at least"_s)
                                       : (exclusive ? u"less than"_s : u"at most"_s);
        return fail(at,
                    u"must be %1 %2, got %3"_s.arg(relation, numberText(bound), numberText(value)));
    };
    // Older drafts spell exclusiveness as a boolean beside minimum/maximum; honouring it costs
    // little and keeps a copied draft-04 schema from silently becoming more permissive.
    const QJsonValue exclusiveMinimum = schema.value(u"exclusiveMinimum"_s);
    const QJsonValue exclusiveMaximum = schema.value(u"exclusiveMaximum"_s);
    if (Result failure = checkBound(u"minimum"_s, true, exclusiveMinimum.toBool(false)))
        return failure;
    if (Result failure = checkBound(u"maximum"_s, false, exclusiveMaximum.toBool(false)))
        return failure;
    if (!exclusiveMinimum.isBool()) {
        if (Result failure = checkBound(u"exclusiveMinimum"_s, true, true))
            return failure;
    }
    if (!exclusiveMaximum.isBool()) {
        if (Result failure = checkBound(u"exclusiveMaximum"_s, false, true))
            return failure;
    }
    return std::nullopt;
}

Result Validation::checkString(const QJsonObject &schema, const QJsonValue &value,
                               const Location &at)
{
    if (!value.isString())
        return std::nullopt;
    // The text is copied out of the value only for a keyword that reads it: megabytes of content
    // under a bare {"type":"string"} cost nothing.
    std::optional<qint64> minLength;
    std::optional<qint64> maxLength;
    if (Result failure = readCount(schema, u"minLength"_s, at, minLength))
        return failure;
    if (Result failure = readCount(schema, u"maxLength"_s, at, maxLength))
        return failure;
    if (minLength || maxLength) {
        const qsizetype length = codePointCount(value.toString());
        if (minLength && length < *minLength)
            return fail(at,
                        u"must be at least %1 long, got %2"_s
                                .arg(countOf(*minLength, u"character"_s, u"characters"_s))
                                .arg(length));
        if (maxLength && length > *maxLength)
            return fail(at,
                        u"must be at most %1 long, got %2"_s
                                .arg(countOf(*maxLength, u"character"_s, u"characters"_s))
                                .arg(length));
    }
    const QJsonValue pattern = schema.value(u"pattern"_s);
    if (pattern.isUndefined())
        return std::nullopt;
    if (!pattern.isString())
        return invalidSchema(at, u"'pattern' must be a string"_s);
    const QRegularExpression &expression = compiled(pattern.toString());
    if (!expression.isValid())
        return invalidSchema(at,
                             u"pattern %1 does not compile: %2"_s.arg(render(pattern),
                                                                      expression.errorString()));
    if (!expression.match(value.toString()).hasMatch())
        return fail(at, u"must match the pattern %1, got %2"_s.arg(render(pattern), render(value)));
    return std::nullopt;
}

Result Validation::checkArray(const QJsonObject &schema, const QJsonValue &value,
                              const Location &at)
{
    if (!value.isArray())
        return std::nullopt;
    const QJsonArray array = value.toArray();
    std::optional<qint64> minItems;
    std::optional<qint64> maxItems;
    if (Result failure = readCount(schema, u"minItems"_s, at, minItems))
        return failure;
    if (Result failure = readCount(schema, u"maxItems"_s, at, maxItems))
        return failure;
    // Sizes first: an oversized array is refused before any of its items is looked at.
    if (minItems && array.size() < *minItems)
        return fail(
                at,
                u"must have at least %1, got %2"_s.arg(countOf(*minItems, u"item"_s, u"items"_s))
                        .arg(array.size()));
    if (maxItems && array.size() > *maxItems)
        return fail(at,
                    u"must have at most %1, got %2"_s.arg(countOf(*maxItems, u"item"_s, u"items"_s))
                            .arg(array.size()));

    const QJsonValue items = schema.value(u"items"_s);
    if (!items.isUndefined()) {
        if (!items.isObject() && !items.isBool())
            return invalidSchema(at,
                                 u"'items' must be a schema (the array form is not supported)"_s);
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (Result failure = check(items, array.at(i), at.into(u"[%1]"_s.arg(i))))
                return failure;
        }
    }

    const QJsonValue unique = schema.value(u"uniqueItems"_s);
    if (!unique.isUndefined() && !unique.isBool())
        return invalidSchema(at, u"'uniqueItems' must be a boolean"_s);
    if (!unique.toBool(false))
        return std::nullopt;
    // Canonical text makes this linear; comparing every pair would be quadratic in a size the
    // client chooses.
    QHash<QString, qsizetype> firstIndexOf;
    for (qsizetype i = 0; i < array.size(); ++i) {
        const std::optional<QString> key = canonical(array.at(i));
        if (!key)
            return fail(at.into(u"[%1]"_s.arg(i)),
                        u"too deeply nested (more than %1 levels)"_s.arg(kMaxDepth),
                        FailureKind::Fatal);
        const auto found = firstIndexOf.constFind(*key);
        if (found != firstIndexOf.constEnd())
            return fail(at,
                        u"must not contain duplicate items, [%1] and [%2] are both %3"_s
                                .arg(found.value())
                                .arg(i)
                                .arg(render(array.at(i))));
        firstIndexOf.insert(*key, i);
    }
    return std::nullopt;
}

Result Validation::checkObject(const QJsonObject &schema, const QJsonValue &value,
                               const Location &at)
{
    if (!value.isObject())
        return std::nullopt;
    const QJsonObject object = value.toObject();
    const QJsonValue propertiesRaw = schema.value(u"properties"_s);
    if (!propertiesRaw.isUndefined() && !propertiesRaw.isObject())
        return invalidSchema(at, u"'properties' must be an object"_s);
    const QJsonObject properties = propertiesRaw.toObject();

    // Unknown names first: a misspelt property also leaves a required one missing, and the
    // list of allowed names is the answer that lets the client fix it.
    const QJsonValue additional = schema.value(u"additionalProperties"_s);
    if (!additional.isUndefined()) {
        if (!additional.isObject() && !additional.isBool())
            return invalidSchema(at, u"'additionalProperties' must be a schema"_s);
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (properties.contains(it.key()))
                continue;
            if (additional.isBool() && !additional.toBool()) {
                QStringList allowed = properties.keys();
                if (allowed.isEmpty())
                    return fail(at,
                                u"unknown property %1 (no properties are allowed)"_s.arg(
                                        quotedName(it.key())));
                if (allowed.size() > kMaxListedItems) {
                    allowed.resize(kMaxListedItems);
                    allowed.append(u"..."_s);
                }
                return fail(at,
                            u"unknown property %1 (allowed: %2)"_s.arg(quotedName(it.key()),
                                                                       allowed.join(u", "_s)));
            }
            if (Result failure = check(additional, it.value(), at.into(propertySegment(it.key()))))
                return failure;
        }
    }

    const QJsonValue required = schema.value(u"required"_s);
    if (!required.isUndefined()) {
        if (!required.isArray())
            return invalidSchema(at, u"'required' must be an array of property names"_s);
        for (const QJsonValue &name : required.toArray()) {
            if (!name.isString())
                return invalidSchema(at, u"'required' must be an array of property names"_s);
            if (!object.contains(name.toString()))
                return fail(at, u"missing required property %1"_s.arg(quotedName(name.toString())));
        }
    }

    for (auto it = properties.begin(); it != properties.end(); ++it) {
        const auto found = object.constFind(it.key());
        if (found == object.constEnd())
            continue;
        if (Result failure = check(it.value(), found.value(), at.into(propertySegment(it.key()))))
            return failure;
    }

    std::optional<qint64> minProperties;
    std::optional<qint64> maxProperties;
    if (Result failure = readCount(schema, u"minProperties"_s, at, minProperties))
        return failure;
    if (Result failure = readCount(schema, u"maxProperties"_s, at, maxProperties))
        return failure;
    if (minProperties && object.size() < *minProperties)
        return fail(at,
                    u"must have at least %1, got %2"_s
                            .arg(countOf(*minProperties, u"property"_s, u"properties"_s))
                            .arg(object.size()));
    if (maxProperties && object.size() > *maxProperties)
        return fail(at,
                    u"must have at most %1, got %2"_s
                            .arg(countOf(*maxProperties, u"property"_s, u"properties"_s))
                            .arg(object.size()));
    return std::nullopt;
}

Result Validation::checkAllOf(const QJsonObject &schema, const QJsonValue &value,
                              const Location &at)
{
    QJsonArray parts;
    if (Result failure = readAlternatives(schema, u"allOf"_s, at, parts))
        return failure;
    for (const QJsonValue &part : parts) {
        if (Result failure = check(part, value, at.same()))
            return failure;
    }
    return std::nullopt;
}

Result Validation::checkAnyOf(const QJsonObject &schema, const QJsonValue &value,
                              const Location &at)
{
    QJsonArray alternatives;
    if (Result failure = readAlternatives(schema, u"anyOf"_s, at, alternatives))
        return failure;
    if (alternatives.isEmpty())
        return std::nullopt;
    QList<Failure> failures;
    for (const QJsonValue &alternative : alternatives) {
        Result failure = check(alternative, value, at.same());
        if (!failure)
            return std::nullopt;
        if (failure->kind == FailureKind::Fatal)
            return failure;
        failures.append(*failure);
    }
    return noAlternativeMatched(
            at, value, failures,
            u"must match at least one of %1 alternatives"_s.arg(alternatives.size()));
}

Result Validation::checkOneOf(const QJsonObject &schema, const QJsonValue &value,
                              const Location &at)
{
    QJsonArray alternatives;
    if (Result failure = readAlternatives(schema, u"oneOf"_s, at, alternatives))
        return failure;
    if (alternatives.isEmpty())
        return std::nullopt;
    QStringList matched;
    QList<Failure> failures;
    for (qsizetype i = 0; i < alternatives.size(); ++i) {
        Result failure = check(alternatives.at(i), value, at.same());
        if (!failure)
            matched.append(QString::number(i + 1));
        else if (failure->kind == FailureKind::Fatal)
            return failure;
        else
            failures.append(*failure);
    }
    const QString summary =
            u"must match exactly one of %1 alternatives, matched %2"_s.arg(alternatives.size())
                    .arg(matched.size());
    if (matched.isEmpty())
        return noAlternativeMatched(at, value, failures, summary);
    if (matched.size() > 1)
        return fail(at, u"%1 (alternatives %2)"_s.arg(summary, joinList(matched, u"and"_s)));
    return std::nullopt;
}

// if/then/else: the value that matches `if` must match `then`, any other must match `else`;
// either may be absent. A failure of `if` only chooses the branch, unless it is fatal.
Result Validation::checkCondition(const QJsonObject &schema, const QJsonValue &value,
                                  const Location &at)
{
    const QJsonValue condition = schema.value(u"if"_s);
    if (condition.isUndefined())
        return std::nullopt;
    Result unmet = check(condition, value, at.same());
    if (unmet && unmet->kind == FailureKind::Fatal)
        return unmet;
    const QJsonValue branch = schema.value(unmet ? u"else"_s : u"then"_s);
    if (branch.isUndefined())
        return std::nullopt;
    return check(branch, value, at.same());
}

Result Validation::checkNot(const QJsonObject &schema, const QJsonValue &value, const Location &at)
{
    const QJsonValue forbidden = schema.value(u"not"_s);
    if (forbidden.isUndefined())
        return std::nullopt;
    Result failure = check(forbidden, value, at.same());
    if (!failure)
        return fail(
                at,
                u"must not match the schema given in 'not', got %1"_s.arg(describeValue(value)));
    if (failure->kind == FailureKind::Fatal)
        return failure;
    return std::nullopt;
}

// Only local JSON pointers: our schemas are self-contained, and fetching anything would be both
// pointless and unsafe.
std::optional<QJsonValue> Validation::resolve(const QString &ref) const
{
    if (!ref.startsWith(u'#'))
        return std::nullopt;
    const QString pointer = QUrl::fromPercentEncoding(ref.mid(1).toUtf8());
    QJsonValue current = m_root;
    if (pointer.isEmpty())
        return current;
    if (!pointer.startsWith(u'/'))
        return std::nullopt;
    const QStringList tokens = pointer.mid(1).split(u'/');
    for (QString token : tokens) {
        token.replace(u"~1"_s, u"/"_s).replace(u"~0"_s, u"~"_s);
        if (current.isObject()) {
            const QJsonObject object = current.toObject();
            const auto found = object.constFind(token);
            if (found == object.constEnd())
                return std::nullopt;
            current = found.value();
        } else if (current.isArray()) {
            const QJsonArray array = current.toArray();
            bool isNumber = false;
            const qsizetype index = token.toLongLong(&isNumber);
            const bool canonicalIndex = isNumber && token == QString::number(index);
            if (!canonicalIndex || index < 0 || index >= array.size())
                return std::nullopt;
            current = array.at(index);
        } else {
            return std::nullopt;
        }
    }
    return current;
}

const QRegularExpression &Validation::compiled(const QString &pattern)
{
    auto found = m_patterns.find(pattern);
    if (found == m_patterns.end())
        found = m_patterns.insert(pattern, QRegularExpression(pcreFromEcma(pattern)));
    return found.value();
}

} // namespace

QString SchemaValidator::validate(const QJsonObject &schema, const QJsonValue &value,
                                  const QString &rootName)
{
    Validation validation(schema);
    const Result failure = validation.check(schema, value, Location{rootName, 0, {}});
    return failure ? failure->message() : QString();
}

} // namespace cmcp
