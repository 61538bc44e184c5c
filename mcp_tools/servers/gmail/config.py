"""The `[gmail]` section: only pydantic, so importing it stays cheap."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

MIB = 1024 * 1024


class GmailConfig(BaseModel):
    """The `[gmail]` section; the account itself is set up in `[google]`."""

    model_config = ConfigDict(extra="forbid")

    allowed_recipients: list[str] = Field(
        default_factory=list,
        description='Globs such as "*@example.com"; when set, gmail.send refuses any other recipient.',
    )
    max_attachment_bytes: int = Field(
        default=2 * MIB, ge=1024, le=25 * MIB, description="Largest binary attachment returned as base64."
    )
    max_send_bytes: int = Field(
        default=20 * MIB,
        ge=1024,
        le=35 * MIB,
        description="Largest message (with attachments) a draft or send may build.",
    )
    attachments_folder: str = Field(
        default="gmail-attachments", description="Folder of the files store where saved attachments go."
    )

    @field_validator("allowed_recipients")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        cleaned = [pattern.strip().lower() for pattern in value if pattern.strip()]
        for pattern in cleaned:
            if "@" not in pattern:
                raise ValueError(f"{pattern!r} must look like an address or a glob such as *@example.com")
        return cleaned
