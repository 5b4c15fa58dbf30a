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
      description: 'Open route, OAuth2 password flow: form fields username (the email under the local provider) and password give an access token. Same lockout (423 with Retry-After) and rate limit (10 a minute) as /auth/login; a temporary identity-provider password is 401 until a new one is set.',
      consumes: ['application/x-www-form-urlencoded'],
      body: TokenForm,
      response: { 200: TokenView, ...loginErrors },
    },
  }, (req) => auth.login(req.body.username, req.body.password));

  app.post('/login', {
    config: { access: open() },
    schema: {
      tags, operationId: 'login', summary: 'Sign in with email and password',
      description: 'Open route, for the local provider: JSON email (any letter case) and password give an access token to send as Authorization: Bearer. A wrong password is 401; after too many failed attempts (10 within 15 minutes by default) the account is locked with 423 and Retry-After. Limited to 10 calls a minute per client.',
      body: LoginBody,
      response: { 200: TokenView, ...loginErrors },
    },
  }, (req) => auth.login(req.body.email, req.body.password));

  app.get('/me', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readCurrentUser', summary: 'The signed-in account', description: "Any signed-in caller. Returns the account behind the bearer token; under the identity-provider mode, the provider's own record.", response: { 200: UserView, ...errorResponses(401) } },
  }, (req) => users.get(actorOf(req).id));
};
