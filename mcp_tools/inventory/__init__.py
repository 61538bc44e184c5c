"""The inventory: every fact about each tool, and the one chain that says who is served it.

`grammar` is the one way an entry names tools (`[server] tools`, `[http.oauth] scopes`, what a
model enables); `chain` is the ordered filters (policy, selection, OAuth reach, dynamic view,
account) and `explain`, the one answer to "is this caller served this tool, and if not, why";
`facts` is one tool's facts as built once at start (names, aliases, final risk and where it came
from, scopes, tier, task support).
"""
