import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';

@Entity('accounts')
export class AccountEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  modified: string;
}

/** An account's membership of an organization: what `X-Organization` is checked against. */
@Entity('memberships')
@Index('memberships_organization_idx', ['organizationId'])
export class MembershipEntity {
  @PrimaryColumn({ type: 'uuid', name: 'account_id' })
  accountId: string;

  @PrimaryColumn({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'memberships_account_id_fkey' })
  account: AccountEntity;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'memberships_organization_id_fkey' })
  organization: OrganizationEntity;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;
}

@Entity('access_tokens')
@Unique('access_tokens_hash_unique', ['tokenHash'])
@Index('access_tokens_account_idx', ['accountId'])
export class AccessTokenEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', name: 'account_id' })
  accountId: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'access_tokens_account_id_fkey' })
  account: AccountEntity;

  /** SHA-256 of the token; the plaintext is shown once and never stored. */
  @Column({ type: 'bytea', name: 'token_hash' })
  tokenHash: Buffer;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', nullable: true })
  expires: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  revoked: string | null;
}
