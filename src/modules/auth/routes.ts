import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, open, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { UserView } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';
import { LoginBody, TokenForm, TokenView } from './schemas.js';
import type { AuthService } from './service.js';

const tags = ['auth'];
const loginErrors = errorResponses(400, 401, 422, 423, 429);

/**
 * Local-provider sign-in. The identity-provider routes (signup, confirm, forgot-password, reset-password, refresh)
 * are registered only in identity-provider mode, so here they answer 404.
 */
export const authRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService; users: UsersService }> = async (app, { auth, users }) => {
  app.post('/token', {
    config: { access: open() },
    schema: {
      tags, operationId: 'issueTokenForm', summary: 'OAuth2 password form: username (the email) and password',
      consumes: ['application/x-www-form-urlencoded'],
      body: TokenForm,
      response: { 200: TokenView, ...loginErrors },
    },
  }, (req) => auth.login(req.body.username, req.body.password));

  app.post('/login', {
    config: { access: open() },
    schema: {
      tags, operationId: 'login', summary: 'Sign in with email and password',
      body: LoginBody,
      response: { 200: TokenView, ...loginErrors },
    },
  }, (req) => auth.login(req.body.email, req.body.password));

  app.get('/me', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readCurrentUser', summary: 'The signed-in account', response: { 200: UserView, ...errorResponses(401) } },
  }, (req) => users.get(actorOf(req).id));
};
