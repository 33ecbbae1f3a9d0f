// The A2A 1.0 AgentCard (served at /.well-known/agent-card.json and by GetExtendedAgentCard) and
// its parts. Shapes only: signing, caching headers and choosing what to publish live elsewhere.

import { type Static, Type } from "@sinclair/typebox";

// Oneof members other than the chosen one are declared absent, so two members match no variant.
const Absent = Type.Optional(Type.Never());

/** `protocolBinding` is `JSONRPC`, `GRPC`, `HTTP+JSON` or a URI; `protocolVersion` is Major.Minor. */
export const AgentInterfaceSchema = Type.Object({
  url: Type.String({ minLength: 1 }),
  protocolBinding: Type.String({ minLength: 1 }),
  protocolVersion: Type.String({ minLength: 1 }),
  tenant: Type.Optional(Type.String()),
});
export type AgentInterface = Static<typeof AgentInterfaceSchema>;

export const AgentProviderSchema = Type.Object({
  url: Type.String(),
  organization: Type.String(),
});
export type AgentProvider = Static<typeof AgentProviderSchema>;

/** A protocol extension the agent supports; `required: true` makes clients that omit it fail (-32008). */
export const AgentExtensionSchema = Type.Object({
  uri: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  required: Type.Optional(Type.Boolean()),
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type AgentExtension = Static<typeof AgentExtensionSchema>;

/** An absent boolean means false. */
export const AgentCapabilitiesSchema = Type.Object({
  streaming: Type.Optional(Type.Boolean()),
  pushNotifications: Type.Optional(Type.Boolean()),
  extendedAgentCard: Type.Optional(Type.Boolean()),
  extensions: Type.Optional(Type.Array(AgentExtensionSchema)),
});
export type AgentCapabilities = Static<typeof AgentCapabilitiesSchema>;

export const ApiKeySecuritySchemeSchema = Type.Object({
  location: Type.Union([Type.Literal("header"), Type.Literal("query"), Type.Literal("cookie")]),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
});
export type ApiKeySecurityScheme = Static<typeof ApiKeySecuritySchemeSchema>;

export const HttpAuthSecuritySchemeSchema = Type.Object({
  scheme: Type.String({ minLength: 1 }),
  bearerFormat: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});
export type HttpAuthSecurityScheme = Static<typeof HttpAuthSecuritySchemeSchema>;

/** Scope name → short description. */
const ScopesSchema = Type.Record(Type.String(), Type.String());
const RefreshUrl = Type.Optional(Type.String());

export const AuthorizationCodeOAuthFlowSchema = Type.Object({
  authorizationUrl: Type.String(),
  tokenUrl: Type.String(),
  refreshUrl: RefreshUrl,
  scopes: ScopesSchema,
  pkceRequired: Type.Optional(Type.Boolean()),
});
export type AuthorizationCodeOAuthFlow = Static<typeof AuthorizationCodeOAuthFlowSchema>;

export const ClientCredentialsOAuthFlowSchema = Type.Object({
  tokenUrl: Type.String(),
  refreshUrl: RefreshUrl,
  scopes: ScopesSchema,
});
export type ClientCredentialsOAuthFlow = Static<typeof ClientCredentialsOAuthFlowSchema>;

export const DeviceCodeOAuthFlowSchema = Type.Object({
  deviceAuthorizationUrl: Type.String(),
  tokenUrl: Type.String(),
  refreshUrl: RefreshUrl,
  scopes: ScopesSchema,
});
export type DeviceCodeOAuthFlow = Static<typeof DeviceCodeOAuthFlowSchema>;

/** Deprecated in 1.0 (implicit and password flows); accepted loosely, never emitted by us. */
const DeprecatedOAuthFlowSchema = Type.Record(Type.String(), Type.Unknown());

/** Exactly one flow, named by its key. */
export const OAuthFlowsSchema = Type.Union([
  Type.Object({
    authorizationCode: AuthorizationCodeOAuthFlowSchema,
    clientCredentials: Absent,
    deviceCode: Absent,
    implicit: Absent,
    password: Absent,
  }),
  Type.Object({
    clientCredentials: ClientCredentialsOAuthFlowSchema,
    authorizationCode: Absent,
    deviceCode: Absent,
    implicit: Absent,
    password: Absent,
  }),
  Type.Object({
    deviceCode: DeviceCodeOAuthFlowSchema,
    authorizationCode: Absent,
    clientCredentials: Absent,
    implicit: Absent,
    password: Absent,
  }),
  Type.Object({
    implicit: DeprecatedOAuthFlowSchema,
    authorizationCode: Absent,
    clientCredentials: Absent,
    deviceCode: Absent,
    password: Absent,
  }),
  Type.Object({
    password: DeprecatedOAuthFlowSchema,
    authorizationCode: Absent,
    clientCredentials: Absent,
    deviceCode: Absent,
    implicit: Absent,
  }),
]);
export type OAuthFlows = Static<typeof OAuthFlowsSchema>;

export const OAuth2SecuritySchemeSchema = Type.Object({
  flows: OAuthFlowsSchema,
  oauth2MetadataUrl: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});
export type OAuth2SecurityScheme = Static<typeof OAuth2SecuritySchemeSchema>;

export const OpenIdConnectSecuritySchemeSchema = Type.Object({
  openIdConnectUrl: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
});
export type OpenIdConnectSecurityScheme = Static<typeof OpenIdConnectSecuritySchemeSchema>;

export const MtlsSecuritySchemeSchema = Type.Object({ description: Type.Optional(Type.String()) });
export type MtlsSecurityScheme = Static<typeof MtlsSecuritySchemeSchema>;

/** The proto oneof wrapper: exactly one of the five keys, e.g. `{ "httpAuthSecurityScheme": { … } }`. */
export const SecuritySchemeSchema = Type.Union([
  Type.Object({
    apiKeySecurityScheme: ApiKeySecuritySchemeSchema,
    httpAuthSecurityScheme: Absent,
    oauth2SecurityScheme: Absent,
    openIdConnectSecurityScheme: Absent,
    mtlsSecurityScheme: Absent,
  }),
  Type.Object({
    httpAuthSecurityScheme: HttpAuthSecuritySchemeSchema,
    apiKeySecurityScheme: Absent,
    oauth2SecurityScheme: Absent,
    openIdConnectSecurityScheme: Absent,
    mtlsSecurityScheme: Absent,
  }),
  Type.Object({
    oauth2SecurityScheme: OAuth2SecuritySchemeSchema,
    apiKeySecurityScheme: Absent,
    httpAuthSecurityScheme: Absent,
    openIdConnectSecurityScheme: Absent,
    mtlsSecurityScheme: Absent,
  }),
  Type.Object({
    openIdConnectSecurityScheme: OpenIdConnectSecuritySchemeSchema,
    apiKeySecurityScheme: Absent,
    httpAuthSecurityScheme: Absent,
    oauth2SecurityScheme: Absent,
    mtlsSecurityScheme: Absent,
  }),
  Type.Object({
    mtlsSecurityScheme: MtlsSecuritySchemeSchema,
    apiKeySecurityScheme: Absent,
    httpAuthSecurityScheme: Absent,
    oauth2SecurityScheme: Absent,
    openIdConnectSecurityScheme: Absent,
  }),
]);
export type SecurityScheme = Static<typeof SecuritySchemeSchema>;

/** Scheme name (a key of `securitySchemes`) → required scopes, e.g. `{ schemes: { bearer: { list: [] } } }`. */
export const SecurityRequirementSchema = Type.Object({
  schemes: Type.Record(Type.String(), Type.Object({ list: Type.Array(Type.String()) })),
});
export type SecurityRequirement = Static<typeof SecurityRequirementSchema>;

export const AgentSkillSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  examples: Type.Optional(Type.Array(Type.String())),
  inputModes: Type.Optional(Type.Array(Type.String())),
  outputModes: Type.Optional(Type.Array(Type.String())),
  securityRequirements: Type.Optional(Type.Array(SecurityRequirementSchema)),
});
export type AgentSkill = Static<typeof AgentSkillSchema>;

/** A JWS over the JCS-canonical card without `signatures`; `protected` and `signature` are base64url. */
export const AgentCardSignatureSchema = Type.Object({
  protected: Type.String({ minLength: 1 }),
  signature: Type.String({ minLength: 1 }),
  header: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type AgentCardSignature = Static<typeof AgentCardSignatureSchema>;

/** `supportedInterfaces` is ordered, first preferred. Must not carry credentials or internal details. */
export const AgentCardSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  version: Type.String({ minLength: 1 }),
  supportedInterfaces: Type.Array(AgentInterfaceSchema, { minItems: 1 }),
  provider: Type.Optional(AgentProviderSchema),
  documentationUrl: Type.Optional(Type.String()),
  iconUrl: Type.Optional(Type.String()),
  capabilities: AgentCapabilitiesSchema,
  securitySchemes: Type.Optional(Type.Record(Type.String(), SecuritySchemeSchema)),
  securityRequirements: Type.Optional(Type.Array(SecurityRequirementSchema)),
  defaultInputModes: Type.Array(Type.String()),
  defaultOutputModes: Type.Array(Type.String()),
  skills: Type.Array(AgentSkillSchema, { minItems: 1 }),
  signatures: Type.Optional(Type.Array(AgentCardSignatureSchema)),
});
export type AgentCard = Static<typeof AgentCardSchema>;
