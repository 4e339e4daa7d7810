"""Places in a person's home folder that hold keys or run code in every new shell.

One list for the two guards that care: the sandbox hides the keys and keeps the start-up
files read-only (``tools.sandbox``), and approval always asks before a write or edit of
either (``session.approval``). Paths are relative to the home folder.
"""

from __future__ import annotations

#: Read by every new shell of the user: a write there runs code outside any sandbox later.
SHELL_STARTUP_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
)
#: Keys and credentials: folders and files.
KEY_LOCATIONS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
)
