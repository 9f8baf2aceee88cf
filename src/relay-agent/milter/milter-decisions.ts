/** What the milter asks the service about a message; the relay agent's wiring implements it. */
export interface MilterDecisions {
  /** The sending company by the one rule (SASL username, else client address, else the sender's verified domain); null when none. Throws when the database cannot be reached. */
  companyOf(facts: {
    relayUsername?: string;
    clientAddress?: string;
    sender?: string;
  }): Promise<{ id: number } | null>;
  /** The company that verified this domain (normalised: lower-case ASCII/punycode, no trailing dot), or null. */
  ownerOf(domain: string): Promise<number | null>;
  /** The DKIM signing key of a verified domain: its selector and private key (PEM). */
  signingKey(domain: string): Promise<{ selector: string; privateKeyPem: string } | null>;
}
