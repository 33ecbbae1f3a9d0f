// Builds each profile's public agent card (one skill; the JSON-RPC endpoint at /a2a/<profile>, listed as a 1.0 and a
// 0.3 interface, the HTTP+JSON binding under the same path, and the gRPC server with the profile as its tenant when one
// runs) and serves it with Cache-Control and an ETag, plus the top-level fields a 0.3 client reads (outside the
// signature, which covers the 1.0 card); and, for a profile with an extendedCard, the extended card that
// GetExtendedAgentCard answers authenticated clients with. Cards carry no credentials and no internal details
// (handler, limits, identity).
import { createHash } from "node:crypto";
import packageJson from "../../package.json" with { type: "json" };
import { type Profile, requiresFullTextCheck, type Skill } from "../config/index.ts";
import {
  type AgentCard,
  type AgentSkill,
  type SecurityRequirement,
  type SecurityScheme,
  toV03CardFields,
} from "../protocol/index.ts";
import { API_KEY_HEADER } from "./authenticator.ts";
import { type CardSigner, JWKS_PATH } from "./card-signer.ts";

/** The A2A protocol version this gateway serves, as cards and `A2A-Version` spell it. */
export const PROTOCOL_VERSION = "1.0";
/** The earlier version the JSON-RPC endpoint also serves (to requests without A2A-Version). */
export const V03_PROTOCOL_VERSION = "0.3";
/** How long clients and proxies may cache a card, in seconds. */
export const CARD_MAX_AGE_SECONDS = 300;

/** The skill tag of a profile whose output is held back until the full-text check passed it. */
export const FINAL_ONLY_TAG = "output:final-only";
/** Appended to such a skill's description, so that a client does not wait for deltas. */
export const FINAL_ONLY_NOTE =
  "Output arrives at the end, in one piece, once it has passed a content check; while the task works, it reports " +
  "progress only.";

/** The endpoint path of a profile: JSON-RPC answers POSTs to it, HTTP+JSON the routes under it (`…/message:send`). */
export function profilePath(profile: string): string {
  return `/a2a/${profile}`;
}

const SECURITY_SCHEMES: Record<string, SecurityScheme> = {
  bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } },
  apiKey: { apiKeySecurityScheme: { location: "header", name: API_KEY_HEADER } },
};

// Either scheme suffices: one requirement per scheme.
const SECURITY_REQUIREMENTS: SecurityRequirement[] = [
  { schemes: { bearer: { list: [] } } },
  { schemes: { apiKey: { list: [] } } },
];

/** A configured skill as a card lists it, with the profile's media types. */
function cardSkill(profile: Profile, skill: Skill): AgentSkill {
  const finalOnly = requiresFullTextCheck(profile);
  // tags is a required, non-empty list on the wire.
  const tags = skill.tags.length > 0 ? [...skill.tags] : [profile.name];
  return {
    id: skill.id,
    name: skill.name,
    description: finalOnly ? `${skill.description.trimEnd()} ${FINAL_ONLY_NOTE}` : skill.description,
    tags: finalOnly && !tags.includes(FINAL_ONLY_TAG) ? [...tags, FINAL_ONLY_TAG] : tags,
    ...(skill.examples && skill.examples.length > 0 ? { examples: [...skill.examples] } : {}),
    inputModes: [...profile.inputModes],
    outputModes: [...profile.outputModes],
  };
}

/**
 * The card of one profile; `baseUrl` is what clients dial (server.publicUrl or the bound address), no trailing "/";
 * `grpcAddress`, the host:port of the gRPC server when one runs (the profile is then the gRPC interface's tenant).
 * With `extended`, the profile's extended card: the same card with the extendedCard's description and skills.
 */
export function buildAgentCard(profile: Profile, baseUrl: string, grpcAddress?: string, extended = false): AgentCard {
  const more = extended ? profile.extendedCard : undefined;
  return {
    name: profile.name,
    description: more?.description ?? profile.description,
    version: packageJson.version,
    // JSON-RPC first: clients take the first interface they support.
    supportedInterfaces: [
      { url: `${baseUrl}${profilePath(profile.name)}`, protocolBinding: "JSONRPC", protocolVersion: PROTOCOL_VERSION },
      {
        url: `${baseUrl}${profilePath(profile.name)}`,
        protocolBinding: "HTTP+JSON",
        protocolVersion: PROTOCOL_VERSION,
      },
      ...(grpcAddress === undefined
        ? []
        : [{ url: grpcAddress, protocolBinding: "GRPC", protocolVersion: PROTOCOL_VERSION, tenant: profile.name }]),
      {
        url: `${baseUrl}${profilePath(profile.name)}`,
        protocolBinding: "JSONRPC",
        protocolVersion: V03_PROTOCOL_VERSION,
      },
    ],
    // A profile without streaming answers -32004, one without push notifications -32003 (see cardProfiles).
    capabilities: {
      streaming: profile.streaming,
      pushNotifications: profile.pushNotifications,
      extendedAgentCard: profile.extendedCard !== undefined,
    },
    securitySchemes: SECURITY_SCHEMES,
    securityRequirements: SECURITY_REQUIREMENTS,
    defaultInputModes: [...profile.inputModes],
    defaultOutputModes: [...profile.outputModes],
    skills: [profile.skill, ...(more?.skills ?? [])].map((skill) => cardSkill(profile, skill)),
  };
}

interface ServedCard {
  readonly body: string;
  readonly etag: string;
}

/**
 * Every profile's card, serialized (and signed, with a signer) once per base URL, answered as JSON or 304 on a
 * matching If-None-Match.
 */
export class AgentCards {
  private readonly cards = new Map<string, ServedCard>();
  private readonly extendedCards = new Map<string, AgentCard>();

  constructor(
    private readonly profiles: readonly Profile[],
    private readonly baseUrl: () => string,
    private readonly signer?: CardSigner,
    /** The host:port of the gRPC server, when one runs. */
    private readonly grpcAddress: () => string | undefined = () => undefined,
  ) {}

  /** GET /.well-known/jwks.json: the public key that verifies the cards; undefined when cards are not signed. */
  jwks(): Response | undefined {
    if (!this.signer) return undefined;
    return new Response(JSON.stringify(this.signer.jwks()), {
      headers: { "Cache-Control": `public, max-age=${CARD_MAX_AGE_SECONDS}`, "Content-Type": "application/json" },
    });
  }

  /**
   * The extended card of a profile (GetExtendedAgentCard), signed like the public one; undefined when the profile has
   * no extendedCard.
   */
  extended(profile: Profile): AgentCard | undefined {
    if (profile.extendedCard === undefined) return undefined;
    const { base, grpc, cacheKey } = this.where(profile);
    let card = this.extendedCards.get(cacheKey);
    if (!card) {
      card = this.signed(buildAgentCard(profile, base, grpc, true), base);
      this.extendedCards.set(cacheKey, card);
    }
    return card;
  }

  /** The card response of a profile (the first one when `name` is undefined), or undefined for an unknown name. */
  respond(name: string | undefined, request: Request): Response | undefined {
    const profile = name === undefined ? this.profiles[0] : this.profiles.find((p) => p.name === name);
    if (!profile) return undefined;
    const { base, grpc, cacheKey } = this.where(profile);
    let card = this.cards.get(cacheKey);
    if (!card) {
      const signed = this.signed(buildAgentCard(profile, base, grpc), base);
      const body = JSON.stringify({ ...signed, ...toV03CardFields(signed) });
      card = { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
      this.cards.set(cacheKey, card);
    }
    const headers = {
      "Cache-Control": `public, max-age=${CARD_MAX_AGE_SECONDS}`,
      ETag: card.etag,
      "Content-Type": "application/json",
    };
    const match = request.headers.get("if-none-match");
    if (match?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === card.etag)) {
      return new Response(null, { status: 304, headers });
    }
    return new Response(card.body, { headers });
  }

  /** Where a profile's cards point now, and the key their serialized forms are kept under. */
  private where(profile: Profile): { base: string; grpc: string | undefined; cacheKey: string } {
    const base = this.baseUrl();
    const grpc = this.grpcAddress();
    return { base, grpc, cacheKey: `${profile.name} ${base} ${grpc ?? ""}` };
  }

  private signed(card: AgentCard, base: string): AgentCard {
    return this.signer ? { ...card, signatures: [this.signer.sign(card, `${base}${JWKS_PATH}`)] } : card;
  }
}
