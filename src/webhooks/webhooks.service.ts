import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { invalidDocument, notFound } from '../common/json-api/api-error.js';
import { loadPage, type Page, pageRequest } from '../common/json-api/pagination.js';
import type { ResourceDocument } from '../common/json-api/resource-body.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import type { Tenant } from '../common/auth/tenant.js';
import { hostOf, isPublicAddress, urlProblem } from './address-policy.js';
import type { CreateWebhookAttributes, UpdateWebhookAttributes } from './dto/webhook.dto.js';
import { newWebhookSecret, SecretBox } from './secret-box.js';
import { deliveryAttemptResource, webhookResource } from './webhook.resource.js';
import type { WebhookListQuery } from './webhook-query.js';
import { resolveHost } from './webhook-sender.js';
import { WebhooksRepository, type WebhookRow } from './webhooks.repository.js';

const URL_POINTER = '/data/attributes/url';

/** The rules of webhooks: tenancy (another organization's webhook is a 404), URLs a partner may use, secrets shown once. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly secrets: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenant: Tenant, document: ResourceDocument<CreateWebhookAttributes>): Promise<ResourceObject> {
    const { url, events, description } = document.attributes;
    await this.assertUsableUrl(url);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const row = await this.webhooks.create(tenant.organization.id, { id, url, events, description: description ?? null, sealed: this.secrets.seal(secret, id) });
    return webhookResource(row, secret);
  }

  async list(tenant: Tenant, query: WebhookListQuery): Promise<Page<ResourceObject[]>> {
    const page = pageRequest(query.page, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
    return loadPage(
      page,
      () => this.webhooks.count(tenant.organization.id),
      () => this.webhooks.page(tenant.organization.id, page),
      (row) => webhookResource(row),
    );
  }

  async get(tenant: Tenant, id: string): Promise<ResourceObject> {
    return webhookResource(await this.find(tenant, id));
  }

  async update(tenant: Tenant, id: string, document: ResourceDocument<UpdateWebhookAttributes>): Promise<ResourceObject> {
    const { url, events, description, enabled } = document.attributes;
    // The tenancy check first: another organization's webhook is a 404 whatever the document says.
    await this.find(tenant, id);
    if (url !== undefined) await this.assertUsableUrl(url);
    const row = await this.webhooks.update(tenant.organization.id, id, { url, events, description, enabled });
    if (!row) throw notFound('No such webhook.');
    return webhookResource(row);
  }

  async remove(tenant: Tenant, id: string): Promise<void> {
    if (!(await this.webhooks.delete(tenant.organization.id, id))) throw notFound('No such webhook.');
  }

  /** A new secret; the replaced one keeps signing for `overlapSeconds` (0: it stops at once). */
  async rotateSecret(tenant: Tenant, id: string, overlapSeconds: number): Promise<ResourceObject> {
    const secret = newWebhookSecret();
    const row = await this.webhooks.replaceSecret(tenant.organization.id, id, this.secrets.seal(secret, id), overlapSeconds);
    if (!row) throw notFound('No such webhook.');
    return webhookResource(row, secret);
  }

  async deliveries(tenant: Tenant, id: string, query: WebhookListQuery): Promise<Page<ResourceObject[]>> {
    await this.find(tenant, id);
    const page = pageRequest(query.page, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
    return loadPage(
      page,
      () => this.webhooks.countAttempts(tenant.organization.id, id),
      () => this.webhooks.pageAttempts(tenant.organization.id, id, page),
      deliveryAttemptResource,
    );
  }

  private async find(tenant: Tenant, id: string): Promise<WebhookRow> {
    const row = await this.webhooks.find(tenant.organization.id, id);
    if (!row) throw notFound('No such webhook.');
    return row;
  }

  /**
   * https, no credentials, and every address the host resolves to public (checked again by the sender
   * at each connection). WEBHOOKS_ALLOW_PRIVATE lifts the address rules and allows http; the host need
   * not resolve then (test receivers come and go).
   */
  private async assertUsableUrl(url: string): Promise<void> {
    const allowPrivate = this.config.webhooks.allowPrivate;
    const problem = urlProblem(url, allowPrivate);
    if (problem) throw invalidDocument(problem, URL_POINTER);
    if (allowPrivate) return;
    const host = hostOf(new URL(url));
    let addresses: string[];
    try {
      addresses = await resolveHost(host);
    } catch {
      throw invalidDocument(`url's host ${host} does not resolve`, URL_POINTER);
    }
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused) throw invalidDocument(`url's host ${host} resolves to ${refused}, which is not a public address (private, loopback, link-local and metadata addresses are refused)`, URL_POINTER);
  }
}
