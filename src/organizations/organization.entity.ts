import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('organizations')
export class OrganizationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  modified: string;
}
