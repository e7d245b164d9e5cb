import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Webhook secrets at rest: AES-256-GCM under the service's key (WEBHOOKS_SECRET_KEY, or a generated one
 * in service_keys), the webhook's id as associated data, so a sealed secret copied onto another webhook
 * row does not open. Layout: iv (12 bytes) ‖ tag (16) ‖ ciphertext.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** From configured text (any length ≥ 32; SHA-256 makes the 32-byte key) or from 32 raw key bytes. */
  static fromText(text: string): SecretBox {
    return new SecretBox(createHash('sha256').update(text).digest());
  }

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== 32) throw new Error('an AES-256 key is 32 bytes');
    return new SecretBox(key);
  }

  seal(secret: string, webhookId: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(webhookId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /** The secret; throws when the key is not the one that sealed it (or the bytes were altered). */
  open(sealed: Buffer, webhookId: string): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(webhookId));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
