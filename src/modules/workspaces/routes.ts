import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { WorkspaceView } from './schemas.js';
import type { WorkspacesService } from './service.js';

export const workspacesRoutes: FastifyPluginAsyncTypebox<{ workspaces: WorkspacesService }> = async (app, { workspaces }) => {
  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags: ['workspaces'], operationId: 'listWorkspaces', summary: 'Workspaces with their member counts',
      description: 'Any signed-in role. Workspaces with the number of their members.',
      response: { 200: Type.Array(WorkspaceView), ...errorResponses(401) },
    },
  }, () => workspaces.list());
};
