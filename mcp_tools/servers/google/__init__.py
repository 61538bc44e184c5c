"""What every Google namespace shares: the account, its tokens and scopes, and calling the APIs.

Not a namespace itself. `config` and `scopes` import only pydantic; everything that needs
the Google libraries (`account`, `client`) is imported when a Google tool first runs.
"""
