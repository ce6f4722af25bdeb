"""Initial schema: sessions, messages, summaries, summary cache, calibrations.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 00:41:02.397846
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('calibrations',
    sa.Column('tenant', sa.String(length=128), nullable=False),
    sa.Column('family', sa.String(length=128), nullable=False),
    sa.Column('ratio', sa.Float(), nullable=False),
    sa.Column('samples', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('tenant', 'family', name=op.f('pk_calibrations'))
    )
    op.create_table('sessions',
    sa.Column('pk', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('tenant', sa.String(length=128), nullable=False),
    sa.Column('external_id', sa.String(length=256), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=False),
    sa.Column('system_prompt', sa.Text(), nullable=True),
    sa.Column('tools', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('settings', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('metadata', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seq', sa.Integer(), nullable=False),
    sa.Column('live_tokens', sa.Integer(), nullable=False),
    sa.Column('conversation_summary', sa.Text(), nullable=True),
    sa.Column('summary_through_id', sa.String(length=36), nullable=True),
    sa.Column('summary_through_seq', sa.Integer(), nullable=False),
    sa.Column('summary_version', sa.Integer(), nullable=False),
    sa.Column('summary_message_count', sa.Integer(), nullable=False),
    sa.Column('summary_tokens', sa.Integer(), nullable=False),
    sa.Column('summary_method', sa.String(length=16), nullable=True),
    sa.Column('cleared_through_seq', sa.Integer(), nullable=False),
    sa.Column('fold_lease_owner', sa.String(length=64), nullable=True),
    sa.Column('fold_lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_context', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('pk', name=op.f('pk_sessions')),
    sa.UniqueConstraint('tenant', 'external_id', name=op.f('uq_sessions_tenant_external_id'))
    )
    op.create_table('summary_cache',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('tokens', sa.Integer(), nullable=False),
    sa.Column('method', sa.String(length=16), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=True),
    sa.Column('tokens_in', sa.Integer(), nullable=False),
    sa.Column('tokens_out', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_summary_cache'))
    )
    op.create_table('messages',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('content', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=True),
    sa.Column('tool_calls', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('tool_call_id', sa.String(length=256), nullable=True),
    sa.Column('metadata', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('token_count', sa.Integer(), nullable=False),
    sa.Column('client_id', sa.String(length=256), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.pk'], name=op.f('fk_messages_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_messages')),
    sa.UniqueConstraint('session_id', 'client_id', name=op.f('uq_messages_session_id_client_id')),
    sa.UniqueConstraint('session_id', 'seq', name=op.f('uq_messages_session_id_seq'))
    )
    op.create_table('summaries',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=True),
    sa.Column('through_id', sa.String(length=36), nullable=True),
    sa.Column('through_seq', sa.Integer(), nullable=False),
    sa.Column('message_count', sa.Integer(), nullable=False),
    sa.Column('tokens', sa.Integer(), nullable=False),
    sa.Column('method', sa.String(length=16), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=True),
    sa.Column('tokens_in', sa.Integer(), nullable=False),
    sa.Column('tokens_out', sa.Integer(), nullable=False),
    sa.Column('stats', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.pk'], name=op.f('fk_summaries_session_id_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_summaries')),
    sa.UniqueConstraint('session_id', 'version', name=op.f('uq_summaries_session_id_version'))
    )


def downgrade() -> None:
    op.drop_table('summaries')
    op.drop_table('messages')
    op.drop_table('summary_cache')
    op.drop_table('sessions')
    op.drop_table('calibrations')
