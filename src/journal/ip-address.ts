// IP address parsing and classification over raw bytes, written by hand (no range library is installed).
// Pure: no DNS, no sockets. Says whether an address is publicly routable unicast, or which kind of non-public it is.
// Shared by the gateway (a webhook URL's literal IP, judged at CreateTaskPushNotificationConfig) and push delivery.

export interface ParsedIp {
  family: 4 | 6;
  /** 4 bytes for IPv4, 16 bytes for IPv6, network order. */
  bytes: Uint8Array;
}

interface Range {
  prefix: readonly number[];
  bits: number;
  label: string;
}

/** Refused IPv4 ranges, most specific first. Every address outside them is public unicast. */
const IPV4_REFUSED: readonly Range[] = [
  { prefix: [255, 255, 255, 255], bits: 32, label: "broadcast" },
  { prefix: [169, 254, 169, 254], bits: 32, label: "metadata" },
  { prefix: [0], bits: 8, label: "unspecified" },
  { prefix: [10], bits: 8, label: "private" },
  { prefix: [100, 64], bits: 10, label: "cgnat" },
  { prefix: [127], bits: 8, label: "loopback" },
  { prefix: [169, 254], bits: 16, label: "link-local" },
  { prefix: [172, 16], bits: 12, label: "private" },
  { prefix: [192, 0, 0], bits: 24, label: "reserved" },
  { prefix: [192, 0, 2], bits: 24, label: "documentation" },
  { prefix: [192, 168], bits: 16, label: "private" },
  { prefix: [198, 18], bits: 15, label: "benchmarking" },
  { prefix: [198, 51, 100], bits: 24, label: "documentation" },
  { prefix: [203, 0, 113], bits: 24, label: "documentation" },
  { prefix: [224], bits: 4, label: "multicast" },
  { prefix: [240], bits: 4, label: "reserved" },
];

/** IPv6 ranges that carry an IPv4 address: the embedded address decides. `offset` is its first byte. */
const IPV6_EMBEDDING: readonly (Range & { offset: number })[] = [
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], bits: 96, label: "ipv4-mapped", offset: 12 },
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], bits: 96, label: "ipv4-translated", offset: 12 },
  { prefix: [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], bits: 96, label: "nat64", offset: 12 },
  { prefix: [0x20, 0x02], bits: 16, label: "6to4", offset: 2 },
];

/** Refused IPv6 ranges, checked after the embedding ones. Outside them, only 2000::/3 (global unicast) passes. */
const IPV6_REFUSED: readonly Range[] = [
  { prefix: [], bits: 128, label: "unspecified" },
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], bits: 128, label: "loopback" },
  { prefix: [], bits: 96, label: "ipv4-compatible" },
  { prefix: [0, 0x64, 0xff, 0x9b, 0, 1], bits: 48, label: "nat64 local-use" },
  { prefix: [0x01, 0, 0, 0, 0, 0, 0, 0], bits: 64, label: "discard" },
  { prefix: [0x20, 0x01, 0, 0], bits: 32, label: "teredo" },
  { prefix: [0x20, 0x01, 0x0d, 0xb8], bits: 32, label: "documentation" },
  { prefix: [0xfc], bits: 7, label: "unique-local" },
  { prefix: [0xfe, 0x80], bits: 10, label: "link-local" },
  { prefix: [0xfe, 0xc0], bits: 10, label: "site-local" },
  { prefix: [0xff], bits: 8, label: "multicast" },
];

const GLOBAL_UNICAST_V6: Range = { prefix: [0x20], bits: 3, label: "global" };

function inRange(bytes: Uint8Array, range: Range): boolean {
  for (let bit = 0; bit < range.bits; bit += 8) {
    const take = Math.min(8, range.bits - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    const index = bit / 8;
    if (((bytes[index] ?? 0) & mask) !== ((range.prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[index] = value;
  }
  return bytes;
}

function parseGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const groups: number[] = [];
  const parts = text.split(":");
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1 && part.includes(".")) {
      const v4 = parseIpv4(part);
      if (v4 === undefined) return undefined;
      groups.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(Number.parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}

function parseIpv6(text: string): Uint8Array | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0] ?? "");
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (const [index, group] of groups.entries()) {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  }
  return bytes;
}

/**
 * Parses a dotted-quad IPv4 or an IPv6 address (brackets and a `%zone` suffix are accepted and dropped).
 * Only canonical dotted-quad IPv4 is accepted: the WHATWG URL parser has already normalized forms like `0x7f.1`.
 */
export function parseIp(text: string): ParsedIp | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (bare.includes(":")) {
    const bytes = parseIpv6(bare.split("%")[0] ?? "");
    return bytes === undefined ? undefined : { family: 6, bytes };
  }
  const bytes = parseIpv4(bare);
  return bytes === undefined ? undefined : { family: 4, bytes };
}

function classifyV4(bytes: Uint8Array): string | undefined {
  return IPV4_REFUSED.find((range) => inRange(bytes, range))?.label;
}

function classifyV6(bytes: Uint8Array): string | undefined {
  for (const range of IPV6_EMBEDDING) {
    if (!inRange(bytes, range)) continue;
    const inner = classifyV4(bytes.subarray(range.offset, range.offset + 4));
    return inner === undefined ? undefined : `${range.label} ${inner}`;
  }
  const refused = IPV6_REFUSED.find((range) => inRange(bytes, range));
  if (refused !== undefined) return refused.label;
  return inRange(bytes, GLOBAL_UNICAST_V6) ? undefined : "reserved";
}

/**
 * The kind of non-public address this is (`loopback`, `private`, `metadata`, `link-local`, `unique-local`,
 * `ipv4-mapped loopback`, …), `undefined` for a public unicast address, or `invalid` when it does not parse.
 * IPv4 inside IPv6 (mapped, translated, NAT64 `64:ff9b::/96`, 6to4) is judged by the embedded IPv4 address.
 */
export function addressKind(address: string): string | undefined {
  const parsed = parseIp(address);
  if (parsed === undefined) return "invalid";
  return parsed.family === 4 ? classifyV4(parsed.bytes) : classifyV6(parsed.bytes);
}
