"""How forwarded mail marks the message it carries; shared by the parser and the summariser."""

from __future__ import annotations

import re

FORWARD_MARKER = re.compile(
    r"^(-{2,}\s*(forwarded|original)[ -]message\s*-{2,}|begin forwarded message:|-{2,}\s*original-nachricht\s*-{2,})$",
    re.IGNORECASE,
)
FORWARD_HEADER = re.compile(r"^(from|to|cc|date|sent|subject|reply-to|von|an|datum|betreff|de|à|objet)\s*:", re.I)
