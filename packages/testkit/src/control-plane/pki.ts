/**
 * The credentials of a test control plane: one certificate authority that signs the API server's serving
 * certificate and every client certificate (kube-apiserver trusts it through `--client-ca-file`), and the key pair
 * that signs service account tokens. Node's `crypto` makes keys but not certificates; `@peculiar/x509` builds and
 * signs the certificates.
 */
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A PEM certificate with its PEM (PKCS #8) private key. */
export interface CertAndKey {
  cert: string;
  key: string;
}

/** Who a client certificate names: the user (CN) and its groups (O). */
export interface Identity {
  /** User name, e.g. `admin`, `system:kube-scheduler`, `jane`. */
  user: string;
  /** Groups, e.g. `system:masters`. Default none. */
  groups?: readonly string[];
}

let serial = 1;

function nextSerial(): string {
  serial += 1;
  return serial.toString(16).padStart(2, '0');
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // Back-dated an hour so that a clock a little behind still accepts it.
  return { notBefore: new Date(now - 60 * 60 * 1000), notAfter: new Date(now + 365 * DAY_MS) };
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END PRIVATE KEY-----\n`;
}

/** Escapes a value for an X.500 name string (RFC 4514). */
function rdn(value: string): string {
  return value.replace(/[\\,+"<>;=#]/g, (c) => `\\${c}`);
}

/** A certificate authority that signs serving and client certificates. */
export class CertificateAuthority {
  private constructor(
    private readonly keys: webcrypto.CryptoKeyPair,
    private readonly certificate: x509.X509Certificate,
    /** The CA certificate, PEM. */
    readonly cert: string,
  ) {}

  /** A new self-signed CA named `name`. */
  static async create(name: string): Promise<CertificateAuthority> {
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const certificate = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: '01',
        name: `CN=${rdn(name)}`,
        ...validity(),
        keys,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
            true,
          ),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      },
      webcrypto,
    );
    return new CertificateAuthority(keys, certificate, certificate.toString('pem'));
  }

  /** The CA's private key, PEM (kube-controller-manager signs CSRs with it). */
  async keyPem(): Promise<string> {
    return keyPem(this.keys.privateKey);
  }

  /** A client certificate for `identity`, as kube-apiserver maps it: CN the user, each O a group. */
  async client(identity: Identity): Promise<CertAndKey> {
    const subject = [`CN=${rdn(identity.user)}`, ...(identity.groups ?? []).map((g) => `O=${rdn(g)}`)].join(', ');
    return this.sign(subject, [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]);
  }

  /** A serving certificate for the given DNS names and IP addresses. */
  async serving(commonName: string, dnsNames: readonly string[], ips: readonly string[]): Promise<CertAndKey> {
    return this.sign(`CN=${rdn(commonName)}`, [
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    ]);
  }

  private async sign(subject: string, extensions: x509.Extension[]): Promise<CertAndKey> {
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: nextSerial(),
        subject,
        issuer: this.certificate.subject,
        ...validity(),
        publicKey: keys.publicKey,
        signingKey: this.keys.privateKey,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          await x509.AuthorityKeyIdentifierExtension.create(this.certificate, false, webcrypto),
          ...extensions,
        ],
      },
      webcrypto,
    );
    return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey) };
  }
}

/** An RSA key pair in PEM, for signing (private) and verifying (public) service account tokens. */
export function serviceAccountKeys(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}
