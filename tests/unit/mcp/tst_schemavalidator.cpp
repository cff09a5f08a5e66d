#include "mcp/SchemaValidator.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Qt::Literals::StringLiterals;
using cmcp::SchemaValidator;

namespace {

// Test JSON is written with single quotes, which moc and the eye both handle better than
// escaped double quotes (moc 6.4 mis-reads raw string literals that contain a double quote).
QByteArray jsonText(QString json)
{
    return json.replace(u'\'', u'"').toUtf8();
}

QJsonObject schemaFrom(const QString &json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(jsonText(json), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        qFatal("bad schema in test: %s (%s)", qPrintable(json), qPrintable(error.errorString()));
    return document.object();
}

// Parsed from text, like a client's value: 1.0 arrives as a double, 5 as an integer.
QJsonValue valueFrom(const QString &json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(jsonText(u'[' + json + u']'), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad value in test: %s (%s)", qPrintable(json), qPrintable(error.errorString()));
    return document.array().at(0);
}

QJsonValue nestedArrays(int depth, const QJsonValue &innermost)
{
    QJsonValue value = innermost;
    for (int i = 0; i < depth; ++i)
        value = QJsonArray{value};
    return value;
}

// The shape of a typical MCP tool's inputSchema.
const QString kRunCommandSchema =
        u"{"
        u"'$schema': 'https://json-schema.org/draft/2020-12/schema',"
        u"'type': 'object',"
        u"'title': 'run_command',"
        u"'properties': {"
        u"'command': {'type': 'string', 'minLength': 1, 'description': 'shell command'},"
        u"'timeout': {'type': 'integer', 'minimum': 1, 'maximum': 600, 'default': 30},"
        u"'working_dir': {'type': 'string'}"
        u"},"
        u"'required': ['command'],"
        u"'additionalProperties': false"
        u"}"_s;

} // namespace

class TestSchemaValidator : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void validates_data();
    void validates();
    void usesRootName();
    void rendersLongValuesShortly();
    void valueNestedTooDeeplyIsReported();
    void refCycleTerminates();
    void uniqueItemsOnTooDeepValueIsReported();
    void exponentialCompositionIsBounded();
    void largeUniqueArrayIsFast();
};

void TestSchemaValidator::validates_data()
{
    QTest::addColumn<QString>("schema");
    QTest::addColumn<QString>("value");
    // Empty: the value must be accepted. Otherwise every fragment must be in the message.
    QTest::addColumn<QStringList>("fragments");

    const auto ok = [](const char *name, const QString &schema, const QString &value) {
        QTest::newRow(name) << schema << value << QStringList();
    };
    const auto bad = [](const char *name, const QString &schema, const QString &value,
                        const QStringList &fragments) {
        QTest::newRow(name) << schema << value << fragments;
    };

    // type
    ok("type string", u"{'type':'string'}"_s, u"'abc'"_s);
    bad("type string vs number", u"{'type':'string'}"_s, u"5"_s,
        {u"arguments: must be a string"_s, u"got integer 5"_s});
    ok("type number int", u"{'type':'number'}"_s, u"5"_s);
    ok("type number fraction", u"{'type':'number'}"_s, u"5.25"_s);
    bad("type number vs string", u"{'type':'number'}"_s, u"'5'"_s,
        {u"must be a number"_s, u"got string \"5\""_s});
    ok("type integer", u"{'type':'integer'}"_s, u"42"_s);
    ok("type integer integral double", u"{'type':'integer'}"_s, u"1.0"_s);
    ok("type integer exponent", u"{'type':'integer'}"_s, u"1e3"_s);
    ok("type integer negative zero", u"{'type':'integer'}"_s, u"-0.0"_s);
    ok("type integer 2^53", u"{'type':'integer'}"_s, u"9007199254740992"_s);
    ok("type integer -2^53", u"{'type':'integer'}"_s, u"-9007199254740992"_s);
    bad("type integer beyond 2^53", u"{'type':'integer'}"_s, u"9007199254740993"_s,
        {u"must be an integer from -2^53 to 2^53, got 9007199254740993"_s});
    bad("type integer 1e308", u"{'type':'integer','minimum':1}"_s, u"1e308"_s,
        {u"must be an integer from -2^53 to 2^53, got 1e+308"_s});
    bad("type integer below -2^53", u"{'type':'integer'}"_s, u"-1e19"_s,
        {u"must be an integer from -2^53 to 2^53"_s});
    ok("type number 1e308", u"{'type':'number'}"_s, u"1e308"_s);
    bad("type integer fraction", u"{'type':'integer'}"_s, u"1.5"_s,
        {u"must be an integer"_s, u"got number 1.5"_s});
    bad("type integer string", u"{'type':'integer'}"_s, u"'abc'"_s,
        {u"must be an integer, got string \"abc\""_s});
    ok("type boolean", u"{'type':'boolean'}"_s, u"false"_s);
    bad("type boolean vs int", u"{'type':'boolean'}"_s, u"0"_s, {u"must be a boolean"_s});
    ok("type null", u"{'type':'null'}"_s, u"null"_s);
    bad("type null vs object", u"{'type':'null'}"_s, u"{}"_s,
        {u"must be null"_s, u"got object {}"_s});
    ok("type object", u"{'type':'object'}"_s, u"{'a':1}"_s);
    bad("type object vs array", u"{'type':'object'}"_s, u"[]"_s,
        {u"must be an object"_s, u"got array []"_s});
    ok("type array", u"{'type':'array'}"_s, u"[1]"_s);
    bad("type array vs null", u"{'type':'array'}"_s, u"null"_s,
        {u"must be an array"_s, u"got null"_s});
    ok("type list second", u"{'type':['string','null']}"_s, u"null"_s);
    bad("type list none", u"{'type':['string','integer','null']}"_s, u"true"_s,
        {u"must be a string, an integer or null"_s, u"got boolean true"_s});
    bad("type unknown name", u"{'type':'text'}"_s, u"'a'"_s,
        {u"invalid schema"_s, u"unknown type \"text\""_s});

    // boolean schemas
    ok("schema true", u"{'properties':{'a':true}}"_s, u"{'a':[1]}"_s);
    bad("schema false", u"{'properties':{'a':false}}"_s, u"{'a':1}"_s,
        {u"arguments.a: is not allowed"_s});

    // enum, const
    ok("enum hit", u"{'enum':['low','high',3]}"_s, u"'high'"_s);
    ok("enum number equal as double", u"{'enum':[1,2]}"_s, u"2.0"_s);
    ok("enum object", u"{'enum':[{'a':1,'b':[true]}]}"_s, u"{'b':[true],'a':1}"_s);
    bad("enum miss", u"{'enum':['low','high']}"_s, u"'medium'"_s,
        {u"must be one of \"low\", \"high\""_s, u"got \"medium\""_s});
    bad("enum is typed", u"{'enum':['1']}"_s, u"1"_s, {u"must be one of \"1\""_s, u"got 1"_s});
    ok("const hit", u"{'const':'v1'}"_s, u"'v1'"_s);
    ok("const array", u"{'const':[1,'a',null]}"_s, u"[1.0,'a',null]"_s);
    bad("const miss", u"{'const':'v1'}"_s, u"'v2'"_s, {u"must be \"v1\""_s, u"got \"v2\""_s});
    bad("const nested miss", u"{'const':{'a':[1,2]}}"_s, u"{'a':[2,1]}"_s,
        {u"must be {\"a\":[1,2]}"_s});
    bad("enum not an array", u"{'enum':'a'}"_s, u"'a'"_s, {u"invalid schema"_s, u"'enum'"_s});

    // numeric bounds
    ok("minimum equal", u"{'minimum':1}"_s, u"1"_s);
    bad("minimum below", u"{'minimum':1}"_s, u"0"_s, {u"arguments: must be at least 1, got 0"_s});
    ok("maximum equal", u"{'maximum':10}"_s, u"10"_s);
    bad("maximum above", u"{'maximum':10}"_s, u"12"_s, {u"must be at most 10, got 12"_s});
    bad("maximum fraction", u"{'maximum':1.5}"_s, u"1.75"_s, {u"must be at most 1.5, got 1.75"_s});
    ok("exclusiveMinimum above", u"{'exclusiveMinimum':0}"_s, u"0.001"_s);
    bad("exclusiveMinimum equal", u"{'exclusiveMinimum':0}"_s, u"0"_s,
        {u"must be greater than 0, got 0"_s});
    ok("exclusiveMaximum below", u"{'exclusiveMaximum':10}"_s, u"9.99"_s);
    bad("exclusiveMaximum equal", u"{'exclusiveMaximum':10}"_s, u"10"_s,
        {u"must be less than 10, got 10"_s});
    bad("draft4 exclusiveMinimum", u"{'minimum':0,'exclusiveMinimum':true}"_s, u"0"_s,
        {u"must be greater than 0"_s});
    ok("draft4 exclusiveMinimum false", u"{'minimum':0,'exclusiveMinimum':false}"_s, u"0"_s);
    bad("maximum exact beyond 2^53", u"{'maximum':9007199254740992}"_s, u"9007199254740993"_s,
        {u"must be at most 9007199254740992"_s});
    ok("bounds ignore strings", u"{'minimum':5}"_s, u"'1'"_s);
    bad("minimum not a number", u"{'minimum':'1'}"_s, u"5"_s,
        {u"invalid schema"_s, u"'minimum' must be a number"_s});

    // strings
    ok("minLength", u"{'minLength':2}"_s, u"'ab'"_s);
    bad("minLength short", u"{'minLength':2}"_s, u"'a'"_s,
        {u"must be at least 2 characters long, got 1"_s});
    ok("maxLength", u"{'maxLength':3}"_s, u"'abc'"_s);
    bad("maxLength long", u"{'maxLength':3}"_s, u"'abcd'"_s,
        {u"must be at most 3 characters long, got 4"_s});
    ok("maxLength counts emoji as one", u"{'maxLength':3}"_s,
       u"\"\U0001F600\U0001F600\U0001F600\""_s);
    bad("maxLength emoji over", u"{'maxLength':2}"_s, u"\"\U0001F600\U0001F600\U0001F600\""_s,
        {u"at most 2 characters long, got 3"_s});
    ok("minLength emoji", u"{'minLength':2}"_s, u"\"\U0001F600\u00E9\""_s);
    bad("minLength one emoji", u"{'minLength':2}"_s, u"\"\U0001F600\""_s,
        {u"at least 2 characters long, got 1"_s});
    bad("maxLength negative", u"{'maxLength':-1}"_s, u"'a'"_s,
        {u"invalid schema"_s, u"'maxLength' must be a non-negative integer"_s});
    ok("pattern search is unanchored", u"{'pattern':'b+'}"_s, u"'abbbc'"_s);
    bad("pattern miss", u"{'pattern':'^[a-z]+$'}"_s, u"'ABC'"_s,
        {u"must match the pattern \"^[a-z]+$\""_s, u"got \"ABC\""_s});
    bad("pattern dollar is end of input", u"{'pattern':'^[a-z]+$'}"_s, u"'abc\\n'"_s,
        {u"must match the pattern"_s, u"\"abc\\n\""_s});
    ok("pattern dollar in class", u"{'pattern':'^[$]+$'}"_s, u"'$$'"_s);
    ok("pattern escaped dollar", u"{'pattern':'^a\\\\$$'}"_s, u"'a$'"_s);
    bad("pattern invalid", u"{'pattern':'(('}"_s, u"'a'"_s,
        {u"invalid schema"_s, u"does not compile"_s});

    // arrays
    ok("items", u"{'items':{'type':'integer'}}"_s, u"[1,2,3]"_s);
    bad("items third",
        u"{'type':'object','properties':{'items':{'type':'array','items':{'maximum':10}}}}"_s,
        u"{'items':[1,2,12]}"_s, {u"arguments.items[2]: must be at most 10, got 12"_s});
    bad("items false", u"{'items':false}"_s, u"[1]"_s, {u"arguments[0]: is not allowed"_s});
    ok("items false empty", u"{'items':false}"_s, u"[]"_s);
    bad("items tuple form", u"{'items':[{'type':'string'}]}"_s, u"['a']"_s,
        {u"invalid schema"_s, u"'items'"_s});
    ok("minItems", u"{'minItems':1}"_s, u"[0]"_s);
    bad("minItems empty", u"{'minItems':1}"_s, u"[]"_s, {u"must have at least 1 item, got 0"_s});
    ok("maxItems", u"{'maxItems':2}"_s, u"[0,1]"_s);
    bad("maxItems over", u"{'maxItems':2}"_s, u"[0,1,2]"_s,
        {u"must have at most 2 items, got 3"_s});
    ok("uniqueItems", u"{'uniqueItems':true}"_s, u"[1,'1',[1],{'a':1},null]"_s);
    bad("uniqueItems numbers", u"{'uniqueItems':true}"_s, u"[1,2,1.0]"_s,
        {u"must not contain duplicate items"_s, u"[0] and [2]"_s});
    bad("uniqueItems objects", u"{'uniqueItems':true}"_s, u"[{'a':1,'b':2},{'b':2,'a':1}]"_s,
        {u"[0] and [1]"_s});
    ok("uniqueItems false", u"{'uniqueItems':false}"_s, u"[1,1]"_s);

    // objects
    ok("required present", u"{'required':['a']}"_s, u"{'a':null}"_s);
    bad("required missing", u"{'required':['command']}"_s, u"{}"_s,
        {u"arguments: missing required property 'command'"_s});
    ok("required ignores non-objects", u"{'required':['a']}"_s, u"5"_s);
    bad("required malformed", u"{'required':'a'}"_s, u"{}"_s,
        {u"invalid schema"_s, u"'required'"_s});
    ok("properties", u"{'properties':{'a':{'type':'string'}}}"_s, u"{'a':'x','b':1}"_s);
    bad("properties wrong", u"{'properties':{'a':{'type':'string'}}}"_s, u"{'a':1}"_s,
        {u"arguments.a: must be a string"_s});
    bad("odd property name", u"{'properties':{'a b':{'type':'string'}}}"_s, u"{'a b':1}"_s,
        {u"arguments[\"a b\"]: must be a string"_s});
    bad("additionalProperties false",
        u"{'properties':{'a':{},'b':{}},'additionalProperties':false}"_s, u"{'a':1,'c':2}"_s,
        {u"arguments: unknown property 'c' (allowed: a, b)"_s});
    bad("additionalProperties false no properties", u"{'additionalProperties':false}"_s,
        u"{'x':1}"_s, {u"unknown property 'x' (no properties are allowed)"_s});
    ok("additionalProperties schema",
       u"{'properties':{'a':{}},'additionalProperties':{'type':'integer'}}"_s,
       u"{'a':'s','b':2}"_s);
    bad("additionalProperties schema fails",
        u"{'properties':{'a':{}},'additionalProperties':{'type':'integer'}}"_s,
        u"{'a':'s','b':'t'}"_s, {u"arguments.b: must be an integer"_s});
    bad("unknown name is escaped", u"{'additionalProperties':false}"_s, u"{'x\\ny':1}"_s,
        {u"unknown property 'x\\ny'"_s});
    ok("minProperties", u"{'minProperties':1}"_s, u"{'a':1}"_s);
    bad("minProperties empty", u"{'minProperties':1}"_s, u"{}"_s,
        {u"must have at least 1 property, got 0"_s});
    ok("maxProperties", u"{'maxProperties':1}"_s, u"{'a':1}"_s);
    bad("maxProperties over", u"{'maxProperties':1}"_s, u"{'a':1,'b':2}"_s,
        {u"must have at most 1 property, got 2"_s});

    // composition
    ok("allOf", u"{'allOf':[{'type':'integer'},{'minimum':1}]}"_s, u"3"_s);
    bad("allOf second", u"{'allOf':[{'type':'integer'},{'minimum':1}]}"_s, u"0"_s,
        {u"must be at least 1"_s});
    ok("anyOf", u"{'anyOf':[{'type':'string'},{'type':'integer'}]}"_s, u"3"_s);
    bad("anyOf no type fits",
        u"{'properties':{'x':{'anyOf':[{'type':'string'},{'type':['integer','null']}]}}}"_s,
        u"{'x':true}"_s,
        {u"arguments.x: must be a string, an integer or null, got boolean true"_s});
    bad("anyOf none",
        u"{'properties':{'x':{'anyOf':[{'type':'string','minLength':3},{'type':'string','pattern':'^[0-9]+$'}]}}}"_s,
        u"{'x':'ab'}"_s,
        {u"arguments.x: must match at least one of 2 alternatives"_s,
         u"1: must be at least 3 characters long, got 2"_s, u"2: must match the pattern"_s});
    bad("anyOf one type fits",
        u"{'properties':{'x':{'anyOf':[{'type':'string','maxLength':2},{'type':'integer'}]}}}"_s,
        u"{'x':'abc'}"_s, {u"arguments.x: must be at most 2 characters long, got 3"_s});
    ok("oneOf", u"{'oneOf':[{'type':'string'},{'type':'integer'}]}"_s, u"'a'"_s);
    bad("oneOf no type fits",
        u"{'properties':{'x':{'oneOf':[{'type':'string'},{'type':'integer'}]}}}"_s, u"{'x':null}"_s,
        {u"arguments.x: must be a string or an integer, got null"_s});
    bad("oneOf none", u"{'properties':{'x':{'oneOf':[{'required':['a']},{'required':['b']}]}}}"_s,
        u"{'x':{}}"_s,
        {u"arguments.x: must match exactly one of 2 alternatives, matched 0"_s,
         u"1: missing required property 'a'"_s, u"2: missing required property 'b'"_s});
    bad("nested anyOf types",
        u"{'anyOf':[{'type':'string'},{'anyOf':[{'type':'integer'},{'type':'string'}]}]}"_s,
        u"[]"_s, {u"arguments: must be a string or an integer, got array []"_s});
    bad("oneOf two", u"{'oneOf':[{'type':'integer'},{'minimum':0}]}"_s, u"1"_s,
        {u"must match exactly one of 2 alternatives, matched 2"_s, u"alternatives 1 and 2"_s});
    bad("oneOf one type fits",
        u"{'oneOf':[{'type':'object','required':['path']},{'type':'string'}]}"_s, u"{}"_s,
        {u"arguments: missing required property 'path'"_s});
    bad("oneOf deeper reason",
        u"{'oneOf':[{'type':'object','properties':{'a':{'type':'string'}}},{'type':'object','required':['b']}]}"_s,
        u"{'a':1}"_s,
        {u"matched 0"_s, u"1: arguments.a: must be a string"_s,
         u"2: missing required property 'b'"_s});
    ok("not", u"{'not':{'type':'null'}}"_s, u"1"_s);
    bad("not matched", u"{'not':{'type':'null'}}"_s, u"null"_s,
        {u"must not match the schema given in 'not'"_s});
    bad("not cannot hide a broken schema", u"{'not':{'$ref':'#/$defs/missing'}}"_s, u"1"_s,
        {u"cannot resolve $ref"_s});
    bad("anyOf empty", u"{'anyOf':[]}"_s, u"1"_s, {u"invalid schema"_s, u"'anyOf'"_s});

    // if/then/else
    const QString conditional =
            u"{'if': {'properties': {'via': {'const': 'phone'}}, 'required': ['via']},"
            u"'then': {'required': ['phone']}, 'else': {'required': ['email']}}"_s;
    ok("if met, then holds", conditional, u"{'via':'phone','phone':'1'}"_s);
    bad("if met, then fails", conditional, u"{'via':'phone','email':'a'}"_s,
        {u"missing required property 'phone'"_s});
    ok("if unmet, else holds", conditional, u"{'via':'mail','email':'a'}"_s);
    bad("if unmet, else fails", conditional, u"{'phone':'1'}"_s,
        {u"missing required property 'email'"_s});
    ok("if without branches", u"{'if': {'type': 'string'}}"_s, u"1"_s);
    bad("if cannot hide a broken schema", u"{'if': {'$ref': '#/nowhere'}, 'then': {}}"_s, u"1"_s,
        {u"cannot resolve $ref"_s});

    // $ref
    const QString refSchema =
            u"{"
            u"'$defs': {'address': {'type': 'object', 'properties': {'street': {'type': 'string'}, "
            u"'city': {'type': 'string'}}, 'required': ['city']},"
            u"'a/b': {'type': 'integer'}, 't~x': {'type': 'boolean'}},"
            u"'definitions': {'name': {'type': 'string', 'minLength': 1}},"
            u"'properties': {'address': {'$ref': '#/$defs/address'}, 'name': {'$ref': "
            u"'#/definitions/name'},"
            u"'slash': {'$ref': '#/$defs/a~1b'}, 'tilde': {'$ref': '#/$defs/t~0x'},"
            u"'self': {'$ref': '#'}, 'first': {'$ref': '#/properties/list/items/0'},"
            u"'list': {'items': [{'type': 'string'}]}}"
            u"}"_s;
    ok("ref defs", refSchema, u"{'address':{'city':'Paris'}}"_s);
    bad("ref defs fails", refSchema, u"{'address':{'street':'x'}}"_s,
        {u"arguments.address: missing required property 'city'"_s});
    bad("ref definitions", refSchema, u"{'name':''}"_s,
        {u"arguments.name: must be at least 1 character long, got 0"_s});
    ok("ref escaped slash", refSchema, u"{'slash':3}"_s);
    bad("ref escaped slash fails", refSchema, u"{'slash':'3'}"_s,
        {u"arguments.slash: must be an integer"_s});
    bad("ref escaped tilde", refSchema, u"{'tilde':1}"_s,
        {u"arguments.tilde: must be a boolean"_s});
    bad("ref root recursion", refSchema, u"{'self':{'self':{'name':5}}}"_s,
        {u"arguments.self.self.name: must be a string"_s});
    bad("ref into array", refSchema, u"{'first':1}"_s, {u"arguments.first: must be a string"_s});
    bad("ref missing target", u"{'$ref':'#/$defs/nope'}"_s, u"1"_s,
        {u"invalid schema"_s, u"cannot resolve $ref \"#/$defs/nope\""_s});
    bad("ref remote", u"{'$ref':'https://example.com/schema.json'}"_s, u"1"_s,
        {u"cannot resolve $ref"_s});
    bad("ref anchor", u"{'$ref':'#thing'}"_s, u"1"_s, {u"cannot resolve $ref"_s});
    bad("ref not a string", u"{'$ref':5}"_s, u"1"_s,
        {u"invalid schema"_s, u"'$ref' must be a string"_s});
    bad("ref to a non-schema", u"{'$defs':{'n':5},'$ref':'#/$defs/n'}"_s, u"1"_s,
        {u"invalid schema"_s, u"must be an object or a boolean"_s});

    // annotations and unknown keywords change nothing
    ok("annotations ignored",
       u"{'title':'t','description':'d','default':5,'examples':[1],'format':'email',"
       u"'$id':'x','$comment':'c','enumNames':['a'],'deprecated':true,'readOnly':true,'x-custom':{'type':'string'}}"_s,
       u"5"_s);
    ok("unknown keyword ignored",
       u"{'type':'string','multipleOfSomething':3,'contentMediaType':'text/plain'}"_s, u"'a'"_s);

    // a realistic MCP tool schema
    ok("mcp minimal", kRunCommandSchema, u"{'command':'ls -la'}"_s);
    ok("mcp full", kRunCommandSchema, u"{'command':'ls','timeout':30,'working_dir':'/tmp'}"_s);
    ok("mcp timeout integral double", kRunCommandSchema, u"{'command':'ls','timeout':30.0}"_s);
    bad("mcp missing command", kRunCommandSchema, u"{'timeout':5}"_s,
        {u"arguments: missing required property 'command'"_s});
    bad("mcp typo", kRunCommandSchema, u"{'comand':'ls'}"_s,
        {u"arguments: unknown property 'comand' (allowed: command, timeout, working_dir)"_s});
    bad("mcp timeout string", kRunCommandSchema, u"{'command':'ls','timeout':'abc'}"_s,
        {u"arguments.timeout: must be an integer, got string \"abc\""_s});
    bad("mcp timeout fraction", kRunCommandSchema, u"{'command':'ls','timeout':2.5}"_s,
        {u"arguments.timeout: must be an integer"_s});
    bad("mcp timeout low", kRunCommandSchema, u"{'command':'ls','timeout':0}"_s,
        {u"arguments.timeout: must be at least 1, got 0"_s});
    bad("mcp timeout high", kRunCommandSchema, u"{'command':'ls','timeout':601}"_s,
        {u"arguments.timeout: must be at most 600, got 601"_s});
    bad("mcp empty command", kRunCommandSchema, u"{'command':''}"_s,
        {u"arguments.command: must be at least 1 character long"_s});
    bad("mcp not an object", kRunCommandSchema, u"['ls']"_s,
        {u"arguments: must be an object, got array"_s});
    bad("mcp null arguments", kRunCommandSchema, u"null"_s,
        {u"arguments: must be an object, got null"_s});
}

void TestSchemaValidator::validates()
{
    QFETCH(QString, schema);
    QFETCH(QString, value);
    QFETCH(QStringList, fragments);

    const QString message = SchemaValidator::validate(schemaFrom(schema), valueFrom(value));
    if (fragments.isEmpty()) {
        QVERIFY2(message.isEmpty(), qPrintable(u"unexpected failure: "_s + message));
        return;
    }
    QVERIFY2(!message.isEmpty(), "the value was accepted");
    for (const QString &fragment : fragments)
        QVERIFY2(message.contains(fragment),
                 qPrintable(u"'%1' not in: %2"_s.arg(fragment, message)));
}

void TestSchemaValidator::usesRootName()
{
    const QJsonObject schema = schemaFrom(u"{'properties':{'count':{'type':'integer'}}}"_s);
    const QString message = SchemaValidator::validate(schema, valueFrom(u"{'count':'x'}"_s),
                                                      u"structuredContent"_s);
    QVERIFY2(message.startsWith(u"structuredContent.count: must be an integer"_s),
             qPrintable(message));
}

void TestSchemaValidator::rendersLongValuesShortly()
{
    const QString longText(100'000, u'x');
    const QJsonObject schema = schemaFrom(u"{'type':'integer'}"_s);
    const QString message = SchemaValidator::validate(schema, QJsonValue(longText));
    QVERIFY2(message.contains(u"got string \"xxxx"_s), qPrintable(message));
    QVERIFY2(message.endsWith(u"..."_s), qPrintable(message));
    QVERIFY2(message.size() < 120, qPrintable(message));

    QJsonObject bigObject;
    for (int i = 0; i < 1000; ++i)
        bigObject.insert(u"key%1"_s.arg(i), QJsonValue(longText));
    const QString objectMessage = SchemaValidator::validate(schema, bigObject);
    QVERIFY2(objectMessage.contains(u"got object {\"key0\":\"xx"_s), qPrintable(objectMessage));
    QVERIFY2(objectMessage.size() < 120, qPrintable(objectMessage));

    const QString longName(1000, u'n');
    const QString unknown = SchemaValidator::validate(
            schemaFrom(u"{'additionalProperties':false}"_s), QJsonObject{{longName, 1}});
    QVERIFY2(unknown.contains(u"unknown property 'nnn"_s), qPrintable(unknown));
    QVERIFY2(unknown.size() < 150, qPrintable(unknown));
}

void TestSchemaValidator::valueNestedTooDeeplyIsReported()
{
    const QJsonObject tree =
            schemaFrom(u"{"
                       u"'$defs': {'node': {'type': 'array', 'items': {'$ref': '#/$defs/node'}}},"
                       u"'$ref': '#/$defs/node'"
                       u"}"_s);
    QCOMPARE(SchemaValidator::validate(tree, nestedArrays(10, QJsonArray())), QString());

    const QString message = SchemaValidator::validate(tree, nestedArrays(1000, QJsonArray()));
    QVERIFY2(message.contains(u"too deeply nested"_s), qPrintable(message));
    QVERIFY2(message.startsWith(u"arguments[0][0]"_s), qPrintable(message));

    // A deep value the schema does not look into is fine.
    QCOMPARE(SchemaValidator::validate(schemaFrom(u"{'type':'array'}"_s), nestedArrays(1000, 1)),
             QString());
}

void TestSchemaValidator::refCycleTerminates()
{
    const QStringList cycles = {
            u"{'$ref':'#'}"_s,
            u"{'$defs':{'a':{'$ref':'#/$defs/b'},'b':{'$ref':'#/$defs/a'}},'$ref':'#/$defs/a'}"_s,
            u"{'$defs':{'a':{'anyOf':[{'$ref':'#/$defs/a'}]}},'properties':{'x':{'$ref':'#/$defs/a'}}}"_s,
            u"{'$defs':{'a':{'not':{'$ref':'#/$defs/a'}}},'$ref':'#/$defs/a'}"_s,
    };
    for (const QString &cycle : cycles) {
        const QString message =
                SchemaValidator::validate(schemaFrom(cycle), valueFrom(u"{'x':1}"_s));
        QVERIFY2(message.contains(u"$ref cycle"_s), qPrintable(cycle + u" -> "_s + message));
    }
    // The same $ref twice at one location, on separate branches, is no cycle.
    const QJsonObject twice = schemaFrom(
            u"{'$defs':{'s':{'type':'string'}},'allOf':[{'$ref':'#/$defs/s'},{'$ref':'#/$defs/s'}]}"_s);
    QCOMPARE(SchemaValidator::validate(twice, QJsonValue(u"a"_s)), QString());
}

void TestSchemaValidator::uniqueItemsOnTooDeepValueIsReported()
{
    const QJsonObject schema = schemaFrom(u"{'uniqueItems':true}"_s);
    const QJsonValue value = QJsonArray{nestedArrays(500, 1), nestedArrays(500, 1)};
    const QString message = SchemaValidator::validate(schema, value);
    QVERIFY2(message.contains(u"arguments[0]: too deeply nested"_s), qPrintable(message));

    const QString enumMessage =
            SchemaValidator::validate(schemaFrom(u"{'enum':[1]}"_s), nestedArrays(500, 1));
    QVERIFY2(enumMessage.contains(u"too deeply nested"_s), qPrintable(enumMessage));
}

void TestSchemaValidator::exponentialCompositionIsBounded()
{
    // Both alternatives descend into the same child, so without a work limit a deep value that
    // fails at the bottom costs 2^depth.
    const QJsonObject schema =
            schemaFrom(u"{"
                       u"'$defs': {'node': {'anyOf': ["
                       u"{'type': 'array', 'items': {'$ref': '#/$defs/node'}},"
                       u"{'type': 'array', 'items': {'$ref': '#/$defs/node'}, 'minItems': 1}"
                       u"]}},"
                       u"'$ref': '#/$defs/node'"
                       u"}"_s);
    QElapsedTimer timer;
    timer.start();
    const QString message = SchemaValidator::validate(schema, nestedArrays(40, u"leaf"_s));
    QVERIFY2(message.contains(u"too large or complex to validate"_s), qPrintable(message));
    qInfo("work limit reached after %lld ms", timer.elapsed());
}

void TestSchemaValidator::largeUniqueArrayIsFast()
{
    QJsonArray array;
    for (int i = 0; i < 100'000; ++i)
        array.append(i);
    const QJsonObject schema =
            schemaFrom(u"{'type':'array','items':{'type':'integer'},'uniqueItems':true}"_s);
    QElapsedTimer timer;
    timer.start();
    QCOMPARE(SchemaValidator::validate(schema, array), QString());
    array.append(99'999);
    const QString message = SchemaValidator::validate(schema, array);
    QVERIFY2(message.contains(u"[99999] and [100000]"_s), qPrintable(message));
    QVERIFY2(timer.elapsed() < 20'000, "uniqueItems looks quadratic");
}

QTEST_GUILESS_MAIN(TestSchemaValidator)
#include "tst_schemavalidator.moc"
