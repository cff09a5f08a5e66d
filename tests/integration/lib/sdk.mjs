// The official MCP TypeScript SDK, as installed in tests/clients/node_modules.
// ES modules ignore NODE_PATH, so the tests reach the SDK through this one file by relative path.
export { Client } from '../../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
export { StreamableHTTPClientTransport } from '../../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
export { SSEClientTransport } from '../../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/sse.js';
export { StdioClientTransport } from '../../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
export {
    McpError,
    ErrorCode,
    LATEST_PROTOCOL_VERSION,
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    LoggingMessageNotificationSchema,
} from '../../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';
import AjvModule from '../../clients/node_modules/ajv/dist/ajv.js';
export const Ajv = AjvModule.default ?? AjvModule;
