#include "common/SettingsTable.h"

namespace cmcp {

namespace {

enum Flag { NoFlags = 0, Secret = 1, Live = 2, Required = 4 };

SettingSpec makeSpec(const char *group, const char *name, SettingType type,
                     const char *defaultValue, const char *help, int flags)
{
    SettingSpec spec;
    spec.group = group;
    spec.name = name;
    spec.type = type;
    spec.defaultValue = defaultValue;
    spec.help = help;
    spec.secret = flags & Secret;
    spec.liveChangeable = flags & Live;
    spec.required = flags & Required;
    return spec;
}

SettingSpec text(const char *group, const char *name, const char *defaultValue, const char *help,
                 int flags)
{
    return makeSpec(group, name, SettingType::Text, defaultValue, help, flags);
}

SettingSpec integer(const char *group, const char *name, const char *defaultValue, qint64 minimum,
                    qint64 maximum, const char *help, int flags)
{
    SettingSpec spec = makeSpec(group, name, SettingType::Integer, defaultValue, help, flags);
    spec.minimum = minimum;
    spec.maximum = maximum;
    return spec;
}

SettingSpec boolean(const char *group, const char *name, const char *defaultValue, const char *help,
                    int flags)
{
    return makeSpec(group, name, SettingType::Boolean, defaultValue, help, flags);
}

SettingSpec list(const char *group, const char *name, const char *defaultValue, const char *help,
                 int flags)
{
    return makeSpec(group, name, SettingType::List, defaultValue, help, flags);
}

SettingSpec choice(const char *group, const char *name, const char *defaultValue,
                   const QStringList &choices, const char *help, int flags)
{
    SettingSpec spec = makeSpec(group, name, SettingType::Choice, defaultValue, help, flags);
    spec.choices = choices;
    return spec;
}

const char *const server = "Server";
const char *const http = "HTTP transport";
const char *const sandbox = "Sandbox";
const char *const jobs = "Background jobs";
const char *const bash = "Bash";
const char *const python = "Python";
const char *const files = "Files";
const char *const web = "Web";
const char *const admin = "Admin channel";

// Timeouts share one range so that any default fits under any maximum.
constexpr qint64 minSeconds = 1;
constexpr qint64 maxSeconds = 3600;

QList<SettingSpec> buildTable()
{
    return {
            // Names and defaults of the original project (volume/config/custom.env).
            text(server, "MCP_HOST", "127.0.0.1",
                 "Address the HTTP transport listens on (an IP address or a host name).", Required),
            integer(server, "MCP_PORT", "8000", 0, 65535,
                    "TCP port of the HTTP transport; 0 picks any free port.", NoFlags),
            boolean(server, "DEBUG", "false",
                    "Development mode: when LOG_LEVEL is not set, the log level is lowered to "
                    "debug.",
                    Live),
            choice(server, "LOG_LEVEL", "INFO",
                   {"trace", "debug", "info", "warning", "warn", "error", "critical", "off"},
                   "Lowest severity written to the log on stderr (case-insensitive).", Live),
            choice(server, "LOG_FORMAT", "text", {"text", "json"},
                   "Log format on stderr: text for people, json for one JSON object per line.",
                   NoFlags),
            choice(server, "MCP_EVENT_DISPATCHER", "epoll", {"epoll", "qt"},
                   "Event loop of the daemon's main thread: epoll, whose wake-ups cost what is "
                   "ready, or qt, Qt's own, which polls every open connection on each wake-up. "
                   "Read from the process environment alone, at start-up.",
                   NoFlags),
            text(server, "SANDBOX_ROOT", "volume/sandbox",
                 "Directory holding the sandboxed workspaces of the tools (relative to the working "
                 "directory).",
                 Required),
            text(server, "AUDIT_LOG", "logs/audit.jsonl",
                 "Hash-chained audit log of every tool call (JSON lines, relative to the working "
                 "directory; check it with cmcpd --verify-audit); empty disables it.",
                 NoFlags),
            integer(server, "AUDIT_MAX_MB", "64", 1, 65536,
                    "Size at which the audit log is rotated to AUDIT_LOG.1, .2, ...; the chain "
                    "continues across the files and none is deleted.",
                    NoFlags),
            boolean(server, "AUDIT_REQUIRED", "false",
                    "Fail closed: a tool call whose audit record cannot be written (disk full) "
                    "fails, and cmcpd does not start without its audit log. When false such "
                    "calls go on and the loss is logged at error level.",
                    NoFlags),

            text(http, "MCP_AUTH_TOKEN", "",
                 "Bearer token HTTP clients must send in the Authorization header; its principal "
                 "is "
                 "named default. Empty, with no MCP_PRINCIPALS_FILE, disables authentication.",
                 Secret),
            boolean(http, "MCP_ALLOW_UNAUTHENTICATED_REMOTE", "false",
                    "Serve HTTP on a non-loopback MCP_HOST without MCP_AUTH_TOKEN or "
                    "MCP_PRINCIPALS_FILE; without it cmcpd refuses to start so. Only behind a "
                    "proxy that authenticates every client.",
                    NoFlags),
            text(http, "MCP_PRINCIPALS_FILE", "",
                 "File of further principals, one per line: a name and the SHA-256 (hex) of its "
                 "bearer token. Each principal reaches only its own sessions, jobs and workspaces.",
                 NoFlags),
            text(http, "MCP_POLICY_FILE", "",
                 "File of profiles and the principals that use them: which tools a principal is "
                 "offered, its rate of calls, its job and named-workspace caps (docs/policy.md). "
                 "Reloaded on SIGHUP; a file that fails validation keeps the policy in force.",
                 NoFlags),
            text(http, "MCP_REQUEST_STATE_KEY_FILE", "",
                 "File whose bytes (32 or more) sign the requestState of input_required results; "
                 "replicas that share it accept each other's. Empty: a random key per process.",
                 NoFlags),
            list(http, "MCP_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]",
                 "Host header values accepted, as host names or addresses without port (the bind "
                 "host is always added).",
                 NoFlags),
            list(http, "MCP_ALLOWED_ORIGINS", "",
                 "Origin header values accepted (scheme://host[:port]); empty accepts only http(s) "
                 "origins whose host is an allowed host.",
                 NoFlags),
            integer(http, "MCP_MAX_BODY_MB", "32", 2, 4096,
                    "Largest HTTP request body accepted, in megabytes; must exceed "
                    "FILE_MAX_SIZE_MB. Uploads to file_transfer URLs are streamed and bounded by "
                    "TRANSFER_MAX_MB instead.",
                    NoFlags),
            integer(http, "MCP_SSE_KEEPALIVE_SECONDS", "15", 1, 3600,
                    "Interval between keep-alive comments on idle SSE streams, in seconds.",
                    NoFlags),
            integer(http, "MCP_SSE_MAX_BUFFER_KB", "1024", 64, 1048576,
                    "Unsent data an SSE stream may queue, in kilobytes, before its slow reader is "
                    "disconnected.",
                    NoFlags),
            integer(http, "MCP_HEADER_TIMEOUT_SECONDS", "10", 1, 3600,
                    "Time a client has to send a request's headers, in seconds, from its first "
                    "byte (or from connecting); then 408 and the connection is closed.",
                    NoFlags),
            integer(http, "MCP_BODY_TIMEOUT_SECONDS", "30", 1, 3600,
                    "Time a request body may take to arrive, in seconds, plus its declared size "
                    "at MCP_BODY_MIN_RATE_KB; then 408 and the connection is closed.",
                    NoFlags),
            integer(http, "MCP_BODY_MIN_RATE_KB", "64", 1, 1048576,
                    "Slowest body upload allowed beyond MCP_BODY_TIMEOUT_SECONDS, in kilobytes "
                    "per second.",
                    NoFlags),
            integer(http, "MCP_BODY_STALL_SECONDS", "10", 1, 3600,
                    "Longest pause in a request body's upload, in seconds, however fast it came "
                    "before; then 408 and the connection is closed.",
                    NoFlags),
            integer(http, "MCP_INCOMPLETE_REQUESTS_MAX_MB", "128", 1, 1048576,
                    "Memory all requests still arriving may hold together, in megabytes; a "
                    "request that would take more is refused with 503.",
                    NoFlags),
            integer(http, "MCP_MAX_CONNECTIONS_PER_PEER", "2048", 1, 1000000,
                    "Open HTTP connections from one client address; more are refused with 503. "
                    "Every local client shares 127.0.0.1, and every client behind a reverse "
                    "proxy shares the proxy's address.",
                    NoFlags),
            integer(http, "MCP_IDLE_TIMEOUT_SECONDS", "60", 1, 86400,
                    "Time a keep-alive connection may sit idle between requests, in seconds. "
                    "Open SSE streams and requests awaiting their answer are never cut.",
                    NoFlags),
            integer(http, "MCP_DRAIN_SECONDS", "20", 0, 3600,
                    "On SIGTERM or SIGINT, how long calls in flight may run on before the daemon "
                    "exits; meanwhile new requests get 503 with Retry-After and /health says "
                    "draining. A second signal exits at once.",
                    NoFlags),
            text(http, "MCP_REPLICA_ID", "",
                 "With several daemons behind one balancer, this daemon's name (1 to 63 "
                 "lowercase letters, digits and '-', such as the pod's): job ids, output handles "
                 "and task ids end in it, and answers without a session carry it in Mcp-Replica, "
                 "so that the balancer routes a request naming one to the daemon that owns it. "
                 "Empty: a single daemon.",
                 NoFlags),
            integer(http, "MCP_MAX_SESSIONS", "10000", 1, 1000000,
                    "Most MCP sessions open at once; further initialize requests are refused.",
                    NoFlags),
            text(http, "TASKS_DIR", "volume/data/tasks",
                 "Directory where each task (Tasks extension) is recorded before its client "
                 "learns of it, so that a restarted daemon still answers for finished tasks and "
                 "reports running ones as lost. Empty keeps tasks in memory only.",
                 NoFlags),
            integer(http, "TASKS_MAX_PER_PRINCIPAL", "100", 1, 1000000,
                    "Tasks (Tasks extension) one principal may have stored at once, working or "
                    "finished within the hour a finished one is kept; past it a task-augmented "
                    "tools/call is refused with an error naming this setting.",
                    NoFlags),
            integer(http, "MCP_SESSION_IDLE_SECONDS", "3600", 1, 604800,
                    "Time without a request after which an MCP session is closed, in seconds.",
                    NoFlags),

            // The jail's policy refuses ids below 1000 and above 4294967293
            // (jail/protocol/Policy.h).
            integer(sandbox, "SANDBOX_UID_BASE", "100000", 1000, 4294967293,
                    "First host uid of the pool jobs run as; every running job has a uid of its "
                    "own.",
                    NoFlags),
            integer(sandbox, "SANDBOX_UID_COUNT", "1000", 1, 1000000,
                    "Number of host uids in the pool, which is also the most jobs running at "
                    "once. Its last tenth (at least one uid) is kept for principals that hold "
                    "none, one each: no principal, whatever its caps, takes the whole pool.",
                    NoFlags),
            integer(sandbox, "SANDBOX_GID", "0", 0, 4294967293,
                    "Host gid every job runs with; 0 means the same number as SANDBOX_UID_BASE.",
                    NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_UID", "0", 0, 4294967293,
                    "Host uid that owns every workspace's files on disk, never a job's; each job "
                    "sees them as its own user's through an idmapped mount. 0 means the uid after "
                    "the browser worker's (SANDBOX_UID_BASE + SANDBOX_UID_COUNT + 1).",
                    NoFlags),
            integer(sandbox, "SANDBOX_OUTPUT_CAP_KB", "256", 1, 65536,
                    "Output of a job kept in its result, per stream, in kilobytes; beyond it the "
                    "first and last halves are kept and the whole output goes to a spill file.",
                    NoFlags),
            list(sandbox, "SANDBOX_REQUIRE", "identity,rlimits,seccomp",
                 "Isolation layers that must be available, or cmcpd refuses to start (names as "
                 "in the sandbox table logged at start-up).",
                 NoFlags),
            boolean(sandbox, "SANDBOX_INSECURE", "false",
                    "Start even when a layer in SANDBOX_REQUIRE is unavailable; logged as a "
                    "warning and marked insecure in every job result.",
                    NoFlags),

            list(sandbox, "JOB_NETWORK_ALLOWED_DOMAINS", "",
                 "Hosts jobs with BASH_NETWORK or PYTHON_NETWORK true may reach through the "
                 "egress gate, written like WEB_ALLOWED_DOMAINS; empty: none (every connection "
                 "is refused, and the job's result says so).",
                 NoFlags),
            boolean(sandbox, "JOB_NETWORK_ALLOW_PRIVATE", "false",
                    "Whether jobs may reach loopback, private, link-local (cloud metadata) and "
                    "other non-public addresses through the egress gate, for a package mirror "
                    "on the local network; the daemon's own ports are among them.",
                    NoFlags),
            integer(sandbox, "EGRESS_IDLE_SECONDS", "300", 1, 86400,
                    "A connection through the egress gate (a job's with BASH_NETWORK or "
                    "PYTHON_NETWORK true, a browser worker's) on which no byte has moved either "
                    "way for this many seconds is closed, a CONNECT tunnel included.",
                    NoFlags),

            choice(sandbox, "SANDBOX_WORKSPACE", "shared", {"shared", "session"},
                   "shared: one workspace for every session; session: each MCP session gets a "
                   "workspace of its own (file tools, resources and jobs), created on first use "
                   "and removed when the session ends.",
                   NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_KEEP_SECONDS", "0", 0, 604800,
                    "With SANDBOX_WORKSPACE=session, how long a session's workspace is kept after "
                    "the session ends, in seconds, before it is removed; a job still running in "
                    "it (taken over with job_attach) keeps it until the job ends.",
                    NoFlags),

            integer(sandbox, "SANDBOX_WORKSPACE_QUOTA_MB", "1024", 0, 16777216,
                    "Bytes each workspace may hold, in megabytes, enforced by the kernel (btrfs "
                    "qgroups on a loop-mounted volume; root only): a write past it fails with "
                    "'Disk quota exceeded'. Where it cannot be enforced the start-up table and "
                    "/health say so (a degradation when set explicitly). 0: no quota, "
                    "workspaces are plain directories.",
                    NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_VOLUME_GB", "64", 1, 65536,
                    "With SANDBOX_WORKSPACE_QUOTA_MB, the size of the volume that holds every "
                    "workspace, in gigabytes (a sparse image under SANDBOX_ROOT: it takes only "
                    "what is written; set when the image is made).",
                    NoFlags),

            integer(sandbox, "SANDBOX_WORKSPACE_CHECKPOINTS_MAX", "16", 1, 1000,
                    "With SANDBOX_WORKSPACE_QUOTA_MB, how many checkpoints one workspace may "
                    "keep; each can hold up to the quota once files change.",
                    NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_NAMED_MAX", "8", 0, 10000,
                    "Named workspaces (workspace_create, workspace_fork) one principal may "
                    "have; they outlive sessions and restarts until workspace_delete.",
                    NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_NAMED_IDLE_SECONDS", "0", 0, 315360000,
                    "A named workspace no call has named or opened, and no job has run in, for "
                    "this many seconds is deleted with its checkpoints. 0: never (named "
                    "workspaces stay until workspace_delete).",
                    NoFlags),
            integer(sandbox, "SANDBOX_WORKSPACE_NAMED_MAX_MB", "4096", 1, 16777216,
                    "The largest quota a named workspace may ask for (size_mb), in megabytes; "
                    "without size_mb it gets SANDBOX_WORKSPACE_QUOTA_MB.",
                    NoFlags),

            integer(jobs, "JOB_TIMEOUT_MAX", "3600", 1, 604800,
                    "Time limit of a background job (background or yield_ms), in seconds; a "
                    "call's timeout may only lower it.",
                    Live),
            integer(jobs, "JOB_MAX_PER_SESSION", "4", 1, 10000,
                    "Background jobs one session may have running at once.", NoFlags),
            integer(jobs, "JOB_MAX_PER_PRINCIPAL", "16", 1, 100000,
                    "Background jobs one principal (a bearer token's name; \"local\" without "
                    "authentication) may have running at once over all its sessions, detached "
                    "jobs included.",
                    NoFlags),
            integer(jobs, "JOB_FOREGROUND_MAX_PER_SESSION", "16", 1, 10000,
                    "Calls' own jobs (system_run_command, system_run_python without background) "
                    "one session may have running at once; each holds a uid of the pool.",
                    NoFlags),
            integer(jobs, "JOB_FOREGROUND_MAX_PER_PRINCIPAL", "64", 1, 100000,
                    "Calls' own jobs one principal may have running at once over all its "
                    "sessions.",
                    NoFlags),
            integer(jobs, "JOB_MAX_TOTAL", "32", 1, 100000,
                    "Background jobs all sessions together may have running at once.", NoFlags),
            boolean(jobs, "JOB_CALL_TEMPLATES", "true",
                    "Foreground command and Python calls without a working_dir fork from bash or "
                    "python3 already running in a jail built once per kind and policy (a "
                    "template's cells), each call still with a uid, user namespace, cgroup, /tmp "
                    "and seccomp filter of its own; false builds a whole jail for each call. "
                    "Needs a root daemon (else calls build their jails).",
                    NoFlags),
            integer(jobs, "JOB_KEEP_SECONDS", "0", 0, 86400,
                    "How long a running background job outlives its session, in seconds, for a "
                    "reconnecting client to take it over with job_attach; 0 kills a session's "
                    "jobs when it ends.",
                    NoFlags),
            integer(jobs, "JOB_OUTPUT_MAX_MB", "64", 1, 65536,
                    "Output of a background job kept for job_output, in megabytes; beyond it "
                    "output is counted and dropped.",
                    NoFlags),
            integer(jobs, "OUTPUT_HANDLE_SECONDS", "900", 1, 604800,
                    "How long the handle of a truncated tool output can be read with "
                    "output_read, in seconds; the output is deleted then.",
                    NoFlags),
            boolean(jobs, "PORTS_ENABLED", "true",
                    "Whether port_publish may make a background job's server reachable at "
                    "/ports/<token>/ on the HTTP listener.",
                    NoFlags),
            integer(jobs, "PORTS_MAX_PER_PRINCIPAL", "8", 1, 1024,
                    "Published ports one principal may have at once.", NoFlags),
            integer(jobs, "PORTS_DEFAULT_SECONDS", "3600", 1, 604800,
                    "How long a published port's URL works when port_publish names no "
                    "expires_in_seconds.",
                    NoFlags),
            integer(jobs, "PORTS_MAX_SECONDS", "86400", 1, 604800,
                    "The longest expires_in_seconds port_publish accepts.", NoFlags),
            boolean(jobs, "PORTS_ALLOW_PUBLIC", "true",
                    "Whether a port may be published public (its URL alone reaches it); false: "
                    "every published port needs the publishing principal's bearer token.",
                    NoFlags),
            integer(jobs, "PORTS_MAX_CONNECTIONS", "32", 1, 4096,
                    "Connections open at once through one published port; more are answered "
                    "503.",
                    NoFlags),
            integer(jobs, "PORTS_MAX_MB", "256", 1, 65536,
                    "Megabytes one connection through a published port may move, both ways "
                    "together; then it is cut.",
                    NoFlags),
            integer(jobs, "PORTS_IDLE_SECONDS", "60", 1, 86400,
                    "A connection through a published port on which no byte moved either way "
                    "for this long is closed (a WebSocket or event stream included).",
                    NoFlags),

            list(bash, "BASH_ALLOWED_COMMANDS", "ls,cat,grep,find,echo,pwd,mkdir,touch",
                 "Programs the bash tool may run, as command names found in /usr/bin or "
                 "/usr/sbin; the kernel lets a command execute bash and exactly these. Empty "
                 "allows nothing; * alone allows every program beneath /usr, still jailed.",
                 Live),
            integer(bash, "BASH_TIMEOUT_DEFAULT", "30", minSeconds, maxSeconds,
                    "Time limit of a bash command whose call sets none, in seconds.", Live),
            integer(bash, "BASH_TIMEOUT_MAX", "120", minSeconds, maxSeconds,
                    "Largest time limit a bash call may ask for, in seconds.", Live),
            choice(bash, "BASH_NETWORK", "false", {"false", "true", "host-network-unsafe"},
                   "false: commands have loopback only, in a network namespace of their own. "
                   "true: that namespace's one way out is the daemon's egress gate, an HTTP "
                   "proxy in HTTP_PROXY/HTTPS_PROXY that reaches only JOB_NETWORK_ALLOWED_DOMAINS "
                   "on public addresses. host-network-unsafe: the host's whole network, "
                   "loopback and the daemon's own ports included.",
                   NoFlags),
            integer(bash, "BASH_WARM_JOBS", "1", 0, 16,
                    "Command jobs kept started and waiting, each for one call, so that a call "
                    "does not wait for its jail and shell to start; 0 starts each job for its "
                    "call. With templates, the idle cells kept for command calls (at least 1).",
                    NoFlags),
            text(bash, "BASH_APPARMOR_PROFILE", "cmcp-job-bash",
                 "AppArmor profile commands run under when AppArmor is enabled and the profile is "
                 "loaded (apparmor/, ./bin/cmcp apparmor); empty: none.",
                 NoFlags),

            integer(python, "PYTHON_MEMORY_LIMIT", "256", 16, 65536,
                    "Memory limit of a Python job, in megabytes.", Live),
            integer(python, "PYTHON_TIMEOUT_DEFAULT", "30", minSeconds, maxSeconds,
                    "Time limit of a Python job whose call sets none, in seconds.", Live),
            integer(python, "PYTHON_TIMEOUT_MAX", "120", minSeconds, maxSeconds,
                    "Largest time limit a Python call may ask for, in seconds.", Live),
            choice(python, "PYTHON_NETWORK", "false", {"false", "true", "host-network-unsafe"},
                   "Like BASH_NETWORK, for Python code.", NoFlags),
            integer(python, "PYTHON_WARM_JOBS", "1", 0, 16,
                    "Python jobs kept started and waiting, each for one call, so that a call "
                    "does not wait for its jail and interpreter to start; 0 starts each job for "
                    "its call. With templates, the idle cells kept for Python calls (at least 1).",
                    NoFlags),
            text(python, "PYTHON_APPARMOR_PROFILE", "cmcp-job-python",
                 "AppArmor profile Python code runs under when AppArmor is enabled and the "
                 "profile is loaded (apparmor/, ./bin/cmcp apparmor); empty: none.",
                 NoFlags),

            integer(files, "TRANSFER_URL_SECONDS", "600", 1, 86400,
                    "How long a URL of file_transfer stays valid, in seconds.", NoFlags),
            integer(files, "TRANSFER_MAX_MB", "4096", 1, 1048576,
                    "Largest file file_transfer uploads, in megabytes, in one PUT or in parts "
                    "(downloads are bounded by the file).",
                    NoFlags),
            integer(files, "FILE_MAX_SIZE_MB", "10", 1, 1024,
                    "Largest file the file tools read or write, in megabytes.", Live),
            list(files, "FILE_ALLOWED_EXTENSIONS", "txt,md,csv,json,py",
                 "File name extensions the file tools accept, without the dot.", Live),
            boolean(files, "FILE_ALLOW_NO_EXTENSION", "false",
                    "Whether the file tools accept file names without an extension (Makefile, "
                    ".bashrc); otherwise such names are refused like a disallowed extension.",
                    Live),
            integer(files, "FILE_LIST_MAX_ENTRIES", "1000", 1, 1000000,
                    "Most entries file_list returns and workspace files resources/list shows; "
                    "longer listings are cut short and marked truncated.",
                    Live),
            integer(files, "FILE_SEARCH_SECONDS", "10", 1, 600,
                    "Time limit of one file_search, in seconds: a search still running then "
                    "returns the matches found so far, marked truncated, or an error when it found "
                    "none.",
                    Live),

            integer(web, "WEB_TIMEOUT_DEFAULT", "30", minSeconds, maxSeconds,
                    "Time limit of a web request, in seconds.", Live),
            list(web, "WEB_ALLOWED_DOMAINS", "*",
                 "Hosts the web tools may reach: * for any, or a list of exact hosts and "
                 "*.example.com wildcards (subdomains only), each with an optional :port; "
                 "case-insensitive, international names as written or in xn-- form.",
                 Live),
            boolean(web, "WEB_ALLOW_PRIVATE", "false",
                    "Whether the web tools may reach loopback, private, link-local (cloud "
                    "metadata), multicast and other non-public addresses; otherwise they are "
                    "refused after the name is resolved, in any IP notation.",
                    Live),
            integer(web, "WEB_MAX_BYTES", "10485760", 1024, 1073741824,
                    "Largest response body the web tools accept, in bytes after "
                    "decompression; a larger download is stopped.",
                    Live),
            text(web, "WEB_SEARCH_URL", "",
                 "Base URL of a SearXNG instance for web_search (its JSON format must be "
                 "enabled); empty: no SearXNG. The operator's endpoint is exempt from "
                 "WEB_ALLOWED_DOMAINS (and from WEB_ALLOW_PRIVATE with "
                 "WEB_SEARCH_ALLOW_PRIVATE=true).",
                 NoFlags),
            boolean(web, "WEB_SEARCH_ALLOW_PRIVATE", "false",
                    "Whether the search back ends (WEB_SEARCH_URL, BRAVE_SEARCH_URL) may be on "
                    "loopback or private addresses, such as a SearXNG beside the daemon; the "
                    "web tools' other requests still follow WEB_ALLOW_PRIVATE.",
                    NoFlags),
            text(web, "BRAVE_SEARCH_API_KEY", "",
                 "Brave Search API key for web_search; empty: no Brave back end.", Secret),
            text(web, "BRAVE_SEARCH_URL", "https://api.search.brave.com/res/v1/web/search",
                 "Endpoint of the Brave Search API, trusted like WEB_SEARCH_URL only while "
                 "BRAVE_SEARCH_API_KEY is set.",
                 NoFlags),
            integer(web, "WEB_BROWSER_PAGES_PER_WORKER", "50", 1, 100000,
                    "Pages a cmcp-browser worker loads before a fresh worker replaces it.",
                    NoFlags),
            integer(web, "WEB_BROWSER_WORKERS", "4", 1, 256,
                    "Browser workers that may run at once, the warm one included. Each serves "
                    "one principal (the one of its first page) and no other; a principal that "
                    "needs one when they all run ends another principal's idle worker.",
                    NoFlags),
            integer(web, "WEB_BROWSER_IDLE_SECONDS", "60", 1, 86400,
                    "Once pages of more than one principal have come, a principal's browser "
                    "worker that has loaded no page for this long ends; its next page starts a "
                    "fresh one (or takes the warm one).",
                    NoFlags),
            integer(web, "WEB_BROWSER_MEMORY_MB", "2048", 0, 1048576,
                    "A root daemon starts each browser worker under cmcp-jail, as its own user "
                    "with no_new_privs, in namespaces of its own whose only way out is the "
                    "daemon's egress gate, and in a cgroup of this many megabytes, Chromium's "
                    "processes included: a page that needs more ends the worker, and the call "
                    "says so. 0: the worker runs outside cmcp-jail.",
                    NoFlags),
            integer(web, "WEB_BROWSER_PIDS", "1024", 16, 65536,
                    "With WEB_BROWSER_MEMORY_MB, the tasks (processes and threads) a browser "
                    "worker's cgroup may hold at once.",
                    NoFlags),
            integer(web, "WEB_BROWSER_RETIRE_PERCENT", "50", 1, 100,
                    "With WEB_BROWSER_MEMORY_MB, a browser worker whose cgroup holds at least "
                    "this share of the limit in anonymous and shared memory after a page is "
                    "replaced by a fresh one, so that pages per worker are bounded by memory as "
                    "well as by WEB_BROWSER_PAGES_PER_WORKER; 100: only at the limit itself.",
                    NoFlags),
            boolean(web, "WEB_BROWSER_PRESTART", "false",
                    "Start the browser worker with the daemon rather than at the first "
                    "web_browse call; either way one is then kept warm.",
                    NoFlags),

            text(admin, "ADMIN_SOCKET", "volume/run/admin.sock",
                 "Local socket of the admin channel cmcp-console connects to (relative to the "
                 "working directory; mode 0600, or 0660 with ADMIN_GROUP); off disables it.",
                 Required),
            text(admin, "ADMIN_GROUP", "",
                 "Group whose members may use the admin channel besides root and the daemon's "
                 "own user (it then owns the socket); empty: none.",
                 NoFlags),
    };
}

QString defaultText(const SettingSpec &spec)
{
    return *spec.defaultValue ? QString::fromUtf8(spec.defaultValue) : QStringLiteral("(empty)");
}

QString escapeMarkdownCell(QString text)
{
    return text.replace(u'|', QStringLiteral("\\|"));
}

// Greedy word wrap; the first line continues after `prefix`, later lines
// start with `indent` spaces.
QString wrap(const QString &prefix, const QString &text, qsizetype indent, qsizetype width)
{
    QString out = prefix;
    qsizetype column = prefix.size();
    bool lineEmpty = true;
    for (const QString &word : text.split(u' ', Qt::SkipEmptyParts)) {
        if (!lineEmpty && column + 1 + word.size() > width) {
            out += u'\n' + QString(indent, u' ');
            column = indent;
            lineEmpty = true;
        }
        if (!lineEmpty) {
            out += u' ';
            ++column;
        }
        out += word;
        column += word.size();
        lineEmpty = false;
    }
    return out + u'\n';
}

} // namespace

const QList<SettingSpec> &settingSpecs()
{
    static const QList<SettingSpec> table = buildTable();
    return table;
}

const SettingSpec *findSettingSpec(QStringView name)
{
    for (const SettingSpec &spec : settingSpecs()) {
        if (QLatin1StringView(spec.name) == name)
            return &spec;
    }
    return nullptr;
}

QString allowedValuesText(const SettingSpec &spec)
{
    switch (spec.type) {
    case SettingType::Text:
        return spec.required ? QStringLiteral("non-empty text") : QStringLiteral("text");
    case SettingType::Integer:
        return QStringLiteral("%1..%2").arg(spec.minimum).arg(spec.maximum);
    case SettingType::Boolean:
        return QStringLiteral("true, false");
    case SettingType::List:
        return QStringLiteral("comma-separated list");
    case SettingType::Choice:
        return QStringLiteral("one of ") + spec.choices.join(QStringLiteral(", "));
    }
    return {};
}

QString settingsMarkdownTable()
{
    QString out = QStringLiteral("| Name | Default | Allowed | Description |\n|---|---|---|---|\n");
    for (const SettingSpec &spec : settingSpecs()) {
        const QString defaultCell = *spec.defaultValue
                ? QStringLiteral("`%1`").arg(escapeMarkdownCell(spec.defaultValue))
                : QStringLiteral("*(empty)*");
        out += QStringLiteral("| `%1` | %2 | %3 | %4 |\n")
                       .arg(QString::fromUtf8(spec.name), defaultCell,
                            escapeMarkdownCell(allowedValuesText(spec)),
                            escapeMarkdownCell(QString::fromUtf8(spec.help)));
    }
    return out;
}

QString settingsHelpText()
{
    constexpr qsizetype width = 80;
    qsizetype nameWidth = 0;
    for (const SettingSpec &spec : settingSpecs())
        nameWidth = std::max(nameWidth, qsizetype(qstrlen(spec.name)));
    const qsizetype indent = 2 + nameWidth + 2;

    QString out;
    QString currentGroup;
    for (const SettingSpec &spec : settingSpecs()) {
        if (currentGroup != QLatin1StringView(spec.group)) {
            currentGroup = QString::fromUtf8(spec.group);
            if (!out.isEmpty())
                out += u'\n';
            out += currentGroup + QStringLiteral(":\n");
        }
        const QString name =
                QStringLiteral("  ") + QString::fromUtf8(spec.name).leftJustified(nameWidth + 2);
        out += wrap(name, QString::fromUtf8(spec.help), indent, width);
        out += wrap(QString(indent, u' '),
                    QStringLiteral("Default: %1; allowed: %2.")
                            .arg(defaultText(spec), allowedValuesText(spec)),
                    indent, width);
    }
    return out;
}

} // namespace cmcp
