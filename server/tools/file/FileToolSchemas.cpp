#include "tools/file/FileToolSchemas.h"

#include "tools/common/ToolBuilding.h"

#include <QJsonArray>

namespace cmcp::fileschemas {

using tools::orFailure;

QJsonObject readInput()
{
    return tools::schema(
            R"({"type":"object","required":["path"],"additionalProperties":false,"properties":{
        "path":{"type":"string","description":"Relative to the workspace root."},
        "encoding":{"type":"string","default":"utf-8","description":"utf-8, latin-1, utf-16, ..., or base64 for binary."},
        "offset":{"type":"integer","minimum":0,"description":"Lines to skip (text only)."},
        "limit":{"type":"integer","minimum":1,"description":"Most lines returned (text only); pages through large files."}}})");
}

QJsonObject readOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","path","content","size","modified"],"properties":{
        "success":{"const":true},
        "path":{"type":"string"},
        "content":{"type":"string","description":"The file's text, or base64 with encoding base64."},
        "size":{"type":"integer","description":"Size of the whole file in bytes."},
        "modified":{"type":"number","description":"Last modification, seconds since the epoch."},
        "sha256":{"type":"string","description":"Hash of the whole file, for file_write's if_match (not set for a line window)."},
        "total_lines":{"type":"integer","description":"Lines in the file (line windows only)."},
        "end_of_file":{"type":"boolean","description":"Whether the line window reaches the end."}}})"));
}

QJsonObject writeInput()
{
    return tools::schema(
            R"({"type":"object","required":["path","content"],"additionalProperties":false,"properties":{
        "path":{"type":"string","description":"Relative to the workspace root."},
        "content":{"type":"string","description":"The whole new content."},
        "encoding":{"type":"string","default":"utf-8","description":"Encoding of content, or base64 for binary."},
        "if_match":{"type":"string","pattern":"^([0-9a-fA-F]{64})?$","description":"Write only if the file's sha256 is this (from file_read); empty: only if it does not exist."}}})");
}

QJsonObject writeOutput()
{
    return orFailure(tools::schema(R"({"type":"object","required":["success","path"],"properties":{
        "success":{"const":true},
        "path":{"type":"string"},
        "size":{"type":"integer"},
        "sha256":{"type":"string","description":"Hash of the content written, the if_match of the next write."},
        "created":{"type":"boolean"}}})"));
}

QJsonObject listInput()
{
    return tools::schema(R"({"type":"object","additionalProperties":false,"properties":{
        "path":{"type":"string","default":"/","description":"Relative to the workspace root."},
        "pattern":{"type":"string","description":"Glob on entry names, e.g. *.py."},
        "recursive":{"type":"boolean","default":false}}})");
}

QJsonObject listOutput()
{
    return orFailure(
            tools::schema(R"({"type":"object","required":["success","path","entries"],"properties":{
        "success":{"const":true},
        "path":{"type":"string"},
        "truncated":{"type":"boolean","description":"True when FILE_LIST_MAX_ENTRIES cut the listing short."},
        "entries":{"type":"array","items":{"type":"object","required":["name","path","is_directory","size","modified"],"properties":{
            "name":{"type":"string"},
            "path":{"type":"string"},
            "is_directory":{"type":"boolean"},
            "is_symlink":{"type":"boolean"},
            "size":{"type":["integer","null"]},
            "modified":{"type":"number"}}}}}})"));
}

QJsonObject deleteInput()
{
    return tools::schema(
            R"({"type":"object","required":["path"],"additionalProperties":false,"properties":{
        "path":{"type":"string"}}})");
}

QJsonObject deleteOutput()
{
    return orFailure(tools::schema(R"({"type":"object","required":["success","path"],"properties":{
        "success":{"const":true},"path":{"type":"string"}}})"));
}

QJsonObject moveInput()
{
    return tools::schema(
            R"({"type":"object","required":["source","destination"],"additionalProperties":false,"properties":{
        "source":{"type":"string"},
        "destination":{"type":"string"},
        "overwrite":{"type":"boolean","default":false,"description":"Replace an existing destination."}}})");
}

QJsonObject moveOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","source","destination"],"properties":{
        "success":{"const":true},"source":{"type":"string"},"destination":{"type":"string"}}})"));
}

QJsonObject editInput()
{
    return tools::schema(
            R"({"type":"object","required":["path","edits"],"additionalProperties":false,"properties":{
        "path":{"type":"string","description":"Relative to the workspace root."},
        "edits":{"type":"array","minItems":1,"description":"Applied in order. old_text is matched exactly, else line by line ignoring trailing whitespace and line endings.","items":{"type":"object","required":["old_text","new_text"],"additionalProperties":false,"properties":{
            "old_text":{"type":"string","minLength":1,"description":"Quoted from the file, with enough context to occur once."},
            "new_text":{"type":"string"}}}},
        "dry_run":{"type":"boolean","default":false,"description":"Return the diff without writing."},
        "if_match":{"type":"string","pattern":"^[0-9a-fA-F]{64}$","description":"Edit only if the file's sha256 is this (from file_read)."}}})");
}

QJsonObject editOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","path","diff","written"],"properties":{
        "success":{"const":true},
        "path":{"type":"string"},
        "diff":{"type":"string","description":"Unified diff of the change; empty when the edits change nothing."},
        "written":{"type":"boolean","description":"False for a dry run or when nothing changed."},
        "sha256":{"type":"string","description":"Hash of the content after the edits, the if_match of the next change."},
        "edits":{"type":"array","items":{"type":"object","required":["line","match"],"properties":{
            "line":{"type":"integer","description":"First line the edit replaced."},
            "match":{"enum":["exact","whitespace"],"description":"How old_text was found."}}}}}})"));
}

QJsonObject searchInput()
{
    return tools::schema(
            R"({"type":"object","required":["pattern"],"additionalProperties":false,"properties":{
        "pattern":{"type":"string","minLength":1,"maxLength":1000},
        "path":{"type":"string","default":"/","description":"Directory searched recursively, or one file."},
        "glob":{"type":"string","description":"Glob on file names, e.g. *.py."},
        "regex":{"type":"boolean","default":false,"description":"pattern is a Perl-compatible regular expression."},
        "ignore_case":{"type":"boolean","default":false},
        "max_results":{"type":"integer","minimum":1,"maximum":1000,"default":100}}})");
}

QJsonObject searchOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","path","matches","truncated","files_scanned"],"properties":{
        "success":{"const":true},
        "path":{"type":"string"},
        "matches":{"type":"array","items":{"type":"object","required":["path","line","column","text"],"properties":{
            "path":{"type":"string"},
            "line":{"type":"integer"},
            "column":{"type":"integer"},
            "text":{"type":"string","description":"The line, cut to 200 characters around the match (… marks a cut)."}}}},
        "truncated":{"type":"boolean","description":"True when a limit stopped the search early."},
        "truncated_by":{"enum":["max_results","max_files","max_bytes","time","depth","max_names"]},
        "files_scanned":{"type":"integer"},
        "skipped_binary":{"type":"integer"},
        "skipped_large":{"type":"integer","description":"Files over FILE_MAX_SIZE_MB, not searched."}}})"));
}

} // namespace cmcp::fileschemas
