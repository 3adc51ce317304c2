// The tool table: every MCP tool of arkivector, in the order tools/list shows them. A new tool is one
// defineTool entry in its own file plus one line here.
import { countTool } from './count.ts';
import { createCollectionTool } from './createCollection.ts';
import type { ToolDefinition } from './defineTool.ts';
import { deleteTool } from './delete.ts';
import { getTool } from './get.ts';
import { listRagTool, searchRagTool } from './kuradb.ts';
import { listCollectionsTool } from './listCollections.ts';
import { listEntitiesTool } from './listEntities.ts';
import { searchTool } from './search.ts';
import { upsertTool } from './upsert.ts';
import { verifyTool } from './verify.ts';

export const TOOLS: readonly ToolDefinition[] = [
  listCollectionsTool,
  searchTool,
  getTool,
  countTool,
  listEntitiesTool,
  verifyTool,
  listRagTool,
  searchRagTool,
  createCollectionTool,
  upsertTool,
  deleteTool,
] as ToolDefinition[];
