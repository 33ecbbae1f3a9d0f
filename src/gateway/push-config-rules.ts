// The gateway's rules for push notification configs: whether a profile offers them, the checks a config must pass
// before it is stored (URL form and policy without any network call, header-safe values), and the view a client gets
// back, which never holds the webhook's credentials. Delivery is the workers' job: nothing here connects anywhere.
import type { Config, Profile } from "../config/index.ts";
import { checkUrlForm, type StoredPushConfig } from "../journal/index.ts";
import type { Violation } from "../protocol/index.ts";
import {
  InvalidParamsError,
  PushNotificationNotSupportedError,
  type TaskPushNotificationConfig,
} from "../protocol/index.ts";

/** The longest webhook URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/**
 * Config ids are visible ASCII without spaces (they are part of the `webhook-id` header), at most 128 characters, and
 * without `"` or `\`: the journal scripts write them into the outbox's JSON as they are.
 */
const CONFIG_ID = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
/** An HTTP auth scheme is a token (RFC 9110). */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** What a header value may hold: visible ASCII, space and tab (no CR/LF, no other control, no non-ASCII). */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,4096}$/;

/** Whether a profile offers push notifications: the installation's push.enabled and the profile's own switch. */
export function pushOffered(config: Config, profile: Profile): boolean {
  return config.push.enabled && profile.pushNotifications;
}

/** Throws PushNotificationNotSupportedError (-32003) unless the profile offers push notifications. */
export function requirePush(config: Config, profile: Profile): void {
  if (!pushOffered(config, profile)) throw new PushNotificationNotSupportedError();
}

/** The profiles as their cards show them: `pushNotifications` is false for all when push.enabled is false. */
export function cardProfiles(config: Config): Profile[] {
  return config.profiles.map((profile) => ({ ...profile, pushNotifications: pushOffered(config, profile) }));
}

function violations(config: TaskPushNotificationConfig, allowHosts: readonly string[], prefix: string): Violation[] {
  const found: Violation[] = [];
  const at = (field: string, description: string) => found.push({ field: `${prefix}${field}`, description });
  if (config.url.length > MAX_WEBHOOK_URL_LENGTH) at("url", `longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  else {
    const form = checkUrlForm(config.url, { allowHosts });
    if (!form.ok) at("url", form.reason);
  }
  if (config.id !== undefined && config.id !== "" && !CONFIG_ID.test(config.id)) {
    at("id", 'at most 128 visible ASCII characters, no spaces, no " or \\');
  }
  if (config.token !== undefined && !HEADER_VALUE.test(config.token)) {
    at("token", "at most 4096 visible ASCII characters (it is sent as a header)");
  }
  const auth = config.authentication;
  if (auth !== undefined) {
    if (!HTTP_TOKEN.test(auth.scheme)) at("authentication.scheme", "an HTTP authentication scheme such as Bearer");
    if (auth.credentials !== undefined && !HEADER_VALUE.test(auth.credentials)) {
      at("authentication.credentials", "at most 4096 visible ASCII characters (they are sent as a header)");
    }
  }
  return found;
}

/**
 * Checks a config as a client sent it and returns what is stored: without an empty `id` (the server assigns one),
 * without `taskId` (the caller sets it). Throws InvalidParamsError (-32602) naming each field that is refused; a
 * URL's refusal reads like the delivery record's (`loopback address 127.0.0.1`, `scheme http: not allowed`, …).
 */
export function checkPushConfig(
  config: TaskPushNotificationConfig,
  allowHosts: readonly string[],
  prefix = "",
): TaskPushNotificationConfig {
  const found = violations(config, allowHosts, prefix);
  const first = found[0];
  if (first) {
    throw new InvalidParamsError(
      `Invalid push notification config: ${first.field}: ${first.description}`,
      found,
      "INVALID_PUSH_NOTIFICATION_CONFIG",
    );
  }
  const { id, taskId: _ignored, ...rest } = config;
  return id === undefined || id === "" ? rest : { ...rest, id };
}

/**
 * The inline `configuration.taskPushNotificationConfig` of SendMessage / SendStreamingMessage, checked; undefined when
 * there is none. Throws -32003 when push notifications are not offered, -32602 when the config is refused.
 */
export function inlinePushConfig(
  config: Config,
  profile: Profile,
  inline: TaskPushNotificationConfig | undefined,
): TaskPushNotificationConfig | undefined {
  if (inline === undefined) return undefined;
  requirePush(config, profile);
  return checkPushConfig(inline, config.push.allowHosts, "configuration.taskPushNotificationConfig.");
}

/**
 * A stored config as a client sees it: `authentication` keeps its `scheme` only, never `credentials` (a secret the
 * client handed over for the webhook). The `token` is returned: the client chose it to recognise its notifications.
 */
export function publicConfig(stored: StoredPushConfig): TaskPushNotificationConfig {
  const { authentication, ...rest } = stored;
  return authentication === undefined ? rest : { ...rest, authentication: { scheme: authentication.scheme } };
}
