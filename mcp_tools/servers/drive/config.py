"""The `[drive]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MIB = 1024 * 1024


class DriveConfig(BaseModel):
    """The `[drive]` section; the account itself is set up in `[google]`."""

    model_config = ConfigDict(extra="forbid")

    access: Literal["app", "read", "all"] = Field(
        default="app",
        description='"app": only files this app created or opened (drive.file); "read": read the whole Drive '
        '(drive.readonly), write only app files; "all": read and change the whole Drive (drive).',
    )
    delete: Literal["trash", "permanent"] = Field(
        default="trash", description="drive.delete moves to the trash (restorable for 30 days) or deletes for good."
    )
    allow_link_sharing: bool = Field(default=False, description='Let drive.share grant "anyone with the link".')
    allowed_domains: list[str] = Field(
        default_factory=list, description="When set, drive.share shares only with addresses in these domains."
    )
    max_read_bytes: int = Field(
        default=2 * MIB, ge=1024, le=25 * MIB, description="Largest binary file drive.read returns as base64."
    )
    max_download_bytes: int = Field(
        default=50 * MIB,
        ge=1024,
        le=1024 * MIB,
        description="Largest file drive.read downloads (text to page through, or a file saved to the files store).",
    )
    max_upload_bytes: int = Field(
        default=20 * MIB, ge=1024, le=100 * MIB, description="Largest content drive.create or drive.update sends."
    )

    @field_validator("allowed_domains")
    @classmethod
    def _domains(cls, value: list[str]) -> list[str]:
        cleaned = [domain.strip().lower().lstrip("@") for domain in value if domain.strip()]
        for domain in cleaned:
            if "@" in domain or "." not in domain or "*" in domain:
                raise ValueError(f"{domain!r} must be a domain such as example.org")
        return cleaned
