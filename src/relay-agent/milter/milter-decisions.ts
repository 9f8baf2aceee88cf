/** The sending company as the milter needs it: who, and whether its account may send at all. */
export interface SendingCompany {
  id: number;
  /** Why it is refused at the end of data (`account suspended`, `no active package`); null when it may send. */
  refusal: string | null;
}

/** What the milter asks the service about a message; the relay agent's wiring implements it. */
export interface MilterDecisions {
  /**
   * The sending company by the one rule, from what Postfix said of the session: the SASL username
   * (`{auth_authen}`), else the client address (the envelope sender deciding among companies
   * that share a network). Null when the client was not identified by either: the sender's
   * domain alone never names the company of a message the milter accepts. Throws when the
   * database cannot be reached.
   */
  sendingCompany(facts: {
    relayUsername?: string;
    clientAddress?: string;
    sender?: string;
  }): Promise<SendingCompany | null>;
  /** The company that verified this domain (normalised: lower-case ASCII/punycode, no trailing dot), or null. */
  ownerOf(domain: string): Promise<number | null>;
  /** The DKIM signing key of a verified domain: its selector and private key (PEM). */
  signingKey(domain: string): Promise<{ selector: string; privateKeyPem: string } | null>;
}
