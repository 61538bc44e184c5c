"""Several vaults: `[notes] vault` (the default) and `[notes.vaults.LABEL]`, each a service with its own index.

Links, backlinks, renames and search never cross vaults: each vault is a whole `NotesService`.
A tool's `vault` argument picks one; it is listed only when more than one is configured.
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcp_tools.core.tooling import Environment, NotConfigured, ToolFailure
from mcp_tools.servers.notes.config import DEFAULT_VAULT, NotesConfig, VaultConfig
from mcp_tools.servers.notes.models import NoteOutput
from mcp_tools.servers.notes.service import NotesService

ResultT = TypeVar("ResultT")


class VaultedNotes(NotesService):
    """The default vault's service, which also holds the other vaults' services by label."""

    def __init__(self, config: NotesConfig, env: Environment) -> None:
        super().__init__(config, env)
        self.vaults: dict[str, NotesService] = {DEFAULT_VAULT: self}
        for label, vault in config.vaults.items():
            self.vaults[label] = _vault_service(config, label, vault, env, self)

    def close(self) -> None:
        for service in self.vaults.values():
            if service is not self:
                service.close()
        super().close()


def _vault_service(
    config: NotesConfig, label: str, vault: VaultConfig, env: Environment, default: NotesService
) -> NotesService:
    settings = vault.model_dump(exclude={"path"}, exclude_none=True)
    own = config.model_copy(update={"vault": vault.path, "vaults": {}, **settings})
    try:
        service = NotesService(own, env)
    except NotConfigured as exc:
        raise NotConfigured(str(exc).replace("[notes] vault", f"[notes.vaults.{label}] path")) from None
    service.state_dir = default.state_dir / "vaults" / label  # its own index; the model files are shared
    service.state_dir.mkdir(parents=True, exist_ok=True)
    service.embedder = default.embedder
    return service


def all_vaults(service: NotesService) -> dict[str, NotesService]:
    return service.vaults if isinstance(service, VaultedNotes) else {DEFAULT_VAULT: service}


def several(service: NotesService) -> bool:
    return len(all_vaults(service)) > 1


def pick(service: NotesService, args: Any) -> tuple[str, NotesService]:
    """The vault the arguments name (the default without one); an unknown label names the known ones."""
    label = getattr(args, "vault", None) or DEFAULT_VAULT
    vaults = all_vaults(service)
    if label not in vaults:
        known = ", ".join(sorted(vaults))
        raise ToolFailure("invalid_arguments", f"no vault {label!r}; the vaults are: {known}", hint="vault=<label>")
    return label, vaults[label]


def answered(service: NotesService, label: str, result: ResultT) -> ResultT:
    """The result, saying which vault answered when there is more than one."""
    if several(service) and isinstance(result, NoteOutput):
        result.vault = label
    return result
