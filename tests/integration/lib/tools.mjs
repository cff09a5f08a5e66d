// Tool calls with the verdicts the tool suites share: `ok` (a success, its structured result),
// `refused` (the tool's own refusal: an MCP tool error whose text and structured error both
// match a pattern) and `invalidArguments` (refused by the inputSchema before the tool ran: since
// protocol 2025-11-25 a tool error too, with text only).
import assert from 'node:assert/strict';

// clientOf: returns the connected SDK client (suites connect in before(), after this is made).
export function toolCalls(clientOf) {
    const call = (name, args) => clientOf().callTool({ name, arguments: args });
    const ok = async (name, args) => {
        const result = await call(name, args);
        assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${result.content?.[0]?.text}`);
        assert.equal(result.structuredContent.success, true);
        return result.structuredContent;
    };
    const refused = async (name, args, pattern) => {
        const result = await call(name, args);
        assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should fail`);
        assert.equal(result.structuredContent.success, false);
        assert.match(result.structuredContent.error, pattern);
        assert.match(result.content[0].text, pattern);
        return result.structuredContent.error;
    };
    const invalidArguments = async (name, args, pattern) => {
        const result = await call(name, args);
        assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should fail`);
        assert.equal(result.structuredContent, undefined);
        assert.match(result.content[0].text, new RegExp(`^invalid arguments for ${name}: `));
        assert.match(result.content[0].text, pattern);
    };
    return { call, ok, refused, invalidArguments };
}
