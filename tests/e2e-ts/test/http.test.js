// termpilot over streamable HTTP with a bearer token, through the official
// TypeScript MCP client.
import { registerAll } from '../lib/scenarios.js';

registerAll('http');
