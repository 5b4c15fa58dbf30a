import { Type } from 'typebox';

export const TokenForm = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 255, description: 'The account email under the local provider' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    grant_type: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
  },
  { additionalProperties: false, examples: [
    { grant_type: 'password', username: 'admin@example.com', password: 'Str0ngPassw0rd' },
  ] },
);

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 255 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, examples: [{ email: 'admin@example.com', password: 'Str0ngPassw0rd' }] },
);

export const TokenView = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
});
