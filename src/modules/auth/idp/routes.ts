import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bearerToken, open, signedIn } from '../../../platform/auth.js';
import { ErrorBody, errorResponses, MessageBody } from '../../../platform/schemas.js';
import { LoginBody, TokenForm } from '../schemas.js';
import {
  CodeSentView,
  ConfirmBody,
  ForgotPasswordBody,
  IdpTokenView,
  ProviderUserView,
  RefreshBody,
  ResetPasswordBody,
  SignUpBody,
  SignUpView,
} from './schemas.js';
import type { IdpAuthService } from './service.js';

const tags = ['auth'];
const signInErrors = errorResponses(400, 401, 422, 429, 503);
const accountErrors = errorResponses(400, 409, 422, 429, 503);
// The pool may forbid self sign-up (the provider's NotAuthorizedException on SignUp).
const signUpErrors = { ...accountErrors, 403: { ...ErrorBody, description: 'The identity provider does not allow self sign-up' } };
// ConfirmForgotPassword refuses an account that is not confirmed yet (UserNotConfirmedException).
const resetErrors = { ...accountErrors, 401: { ...ErrorBody, description: 'The account is not confirmed yet' } };

export const CONFIRMED = 'Account confirmed; you can sign in now';
export const CODE_SENT = 'If the account exists, a confirmation code has been sent';
export const PASSWORD_SET = 'Password set; sign in with the new password';

/**
 * Identity-provider mode: sign-in goes to the provider, and the provider-only routes exist (signup and confirm only
 * with IDP_SELF_SIGNUP_ENABLED). Registered instead of the local provider's routes, so under `local` all five are 404.
 */
export const idpAuthRoutes: FastifyPluginAsyncTypebox<{ idp: IdpAuthService; selfSignup: boolean }> = async (app, { idp, selfSignup }) => {
  app.post('/token', {
    config: { access: open() },
    schema: {
      tags, operationId: 'issueTokenForm', summary: "OAuth2 password form: the provider's username and password",
      consumes: ['application/x-www-form-urlencoded'],
      body: TokenForm,
      response: { 200: IdpTokenView, ...signInErrors },
    },
  }, (req) => idp.signIn(req.body.username, req.body.password));

  app.post('/login', {
    config: { access: open() },
    schema: {
      tags, operationId: 'login', summary: 'Sign in through the identity provider (email as username)',
      body: LoginBody,
      response: { 200: IdpTokenView, ...signInErrors },
    },
  }, (req) => idp.signIn(req.body.email, req.body.password));

  app.post('/refresh', {
    config: { access: open() },
    schema: {
      tags, operationId: 'refreshToken', summary: 'A new access token for a refresh token from sign-in',
      body: RefreshBody,
      response: { 200: IdpTokenView, ...signInErrors },
    },
  }, (req) => idp.refresh(req.body.refresh_token));

  app.get('/me', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readCurrentUser', summary: "The identity provider's record of the caller",
      response: { 200: ProviderUserView, ...errorResponses(401, 429, 503) },
    },
  }, (req) => idp.me(bearerToken(req)));

  if (selfSignup) {
    app.post('/signup', {
      config: { access: open() },
      schema: {
        tags, operationId: 'signUp', summary: 'Create an account with the identity provider (self sign-up)',
        body: SignUpBody,
        response: { 201: SignUpView, ...signUpErrors },
      },
    }, async (req, reply) => reply.code(201).send(await idp.signUp(req.body)));

    app.post('/confirm', {
      config: { access: open() },
      schema: {
        tags, operationId: 'confirmSignUp', summary: 'Confirm a sign-up with the code the provider sent',
        body: ConfirmBody,
        response: { 200: MessageBody, ...accountErrors },
      },
    }, async (req) => {
      await idp.confirm(req.body.username, req.body.confirmation_code);
      return { message: CONFIRMED };
    });
  }

  app.post('/forgot-password', {
    config: { access: open() },
    schema: {
      tags, operationId: 'forgotPassword', summary: 'Have the identity provider send a password-reset code',
      body: ForgotPasswordBody,
      response: { 200: CodeSentView, ...accountErrors },
    },
  }, async (req) => {
    await idp.forgotPassword(req.body.username);
    // Where the code went would tell that the account exists: the answer is the same for every username.
    return { message: CODE_SENT, code_delivery: null };
  });

  app.post('/reset-password', {
    config: { access: open() },
    schema: {
      tags, operationId: 'resetPassword', summary: 'Set a new password with the code from forgot-password',
      body: ResetPasswordBody,
      response: { 200: MessageBody, ...resetErrors },
    },
  }, async (req) => {
    await idp.resetPassword(req.body.username, req.body.confirmation_code, req.body.new_password);
    return { message: PASSWORD_SET };
  });
};
