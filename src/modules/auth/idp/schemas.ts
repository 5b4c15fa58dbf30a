import { Type } from 'typebox';
import { Nullable } from '../../../platform/schemas.js';

const Username = Type.String({ minLength: 1, maxLength: 128, pattern: '^\\S+$', description: "The provider's username" });
const Code = Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S+$' });
const Password = Type.String({ minLength: 1, maxLength: 256, description: "Checked against the user pool's password policy" });
const NamePart = Type.String({ minLength: 1, maxLength: 255 });

export const SignUpBody = Type.Object(
  {
    username: Username,
    email: Type.String({ format: 'email', maxLength: 255 }),
    password: Password,
    given_name: Type.Optional(NamePart),
    family_name: Type.Optional(NamePart),
  },
  { additionalProperties: false },
);

export const ConfirmBody = Type.Object({ username: Username, confirmation_code: Code }, { additionalProperties: false });
export const ForgotPasswordBody = Type.Object({ username: Username }, { additionalProperties: false });
export const ResetPasswordBody = Type.Object(
  { username: Username, confirmation_code: Code, new_password: Password },
  { additionalProperties: false },
);
export const RefreshBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 8192 }) },
  { additionalProperties: false },
);

export const CodeDeliveryView = Nullable(
  Type.Object({
    destination: Nullable(Type.String({ description: 'Masked, e.g. a***@e***' })),
    medium: Nullable(Type.String({ description: 'EMAIL or SMS' })),
    attribute: Nullable(Type.String()),
  }),
);

export const SignUpView = Type.Object({
  user_sub: Nullable(Type.String({ description: "The provider's subject id; the account's external_id is idp:<user_sub>" })),
  user_confirmed: Type.Boolean(),
  code_delivery: CodeDeliveryView,
});

export const CodeSentView = Type.Object({
  message: Type.String(),
  code_delivery: Type.Null({ description: 'Always null: where the code went would tell whether the account exists' }),
});

export const IdpTokenView = Type.Object({
  access_token: Type.String({ description: "The identity provider's access token" }),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
  refresh_token: Type.Optional(Type.String({ description: 'For POST /auth/refresh (sign-in only)' })),
});

export const ProviderUserView = Type.Object({
  username: Type.String(),
  attributes: Type.Record(Type.String(), Type.String(), { description: "The provider's attributes (sub, email, given_name, ...)" }),
});
