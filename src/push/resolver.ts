// Host name resolution for webhook targets: the Resolver shape the address policy takes, and the system one.
// The policy checks every address a resolver returns; the connection then goes to one of those, never re-resolved.
import { lookup } from "node:dns/promises";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to. Rejects (e.g. `ENOTFOUND`) when the name does not resolve. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system's resolver (`getaddrinfo` through `node:dns/promises` lookup, all addresses). */
export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};
