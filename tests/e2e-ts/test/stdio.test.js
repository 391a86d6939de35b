// termpilot over stdio, through the official TypeScript MCP client.
import { registerAll } from '../lib/scenarios.js';

registerAll('stdio');
