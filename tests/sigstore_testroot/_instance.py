"""A private Sigstore instance on 127.0.0.1: stand-in Fulcio and Rekor v1, test OIDC.

sigstore-python's own ``SigningContext`` and ``Signer`` talk to it over HTTP
exactly as they talk to the public good instance; the bundles it produces are
verified by sigstore's unmodified ``Verifier`` under the instance's trusted
root. Nothing here is used outside tests.
"""

from __future__ import annotations

import base64
import json
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from ._log import TransparencyLog, dsse_body
from ._pki import CertificateAuthority, CTLog, LeafIdentity, der, pem, spki_der

GITHUB_ACTIONS = "https://token.actions.githubusercontent.com"
GOOGLE = "https://accounts.google.com"
SIGSTORE_DEX = "https://oauth2.sigstore.dev/auth"

TOKEN_AUDIENCE = "sigstore"


class FulcioRefusal(Exception):
    """The stand-in Fulcio refuses a request (becomes an HTTP 4xx with a message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class SigstoreTestInstance:
    """A whole private Sigstore: CA, CT log, transparency log, OIDC key and servers.

    ``trusted_issuers`` are the OIDC issuers whose tokens (signed by this
    instance's test OIDC key) the stand-in Fulcio accepts.
    """

    def __init__(self, workdir: Path, *, label: str = "effectbench-test") -> None:
        self.workdir = workdir
        self.label = label
        self.created = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
        self.ca = CertificateAuthority(label=label, not_before=self.created)
        self.ct_log = CTLog()
        self.tlog = TransparencyLog()
        self.oidc_key = ec.generate_private_key(ec.SECP256R1())
        self.trusted_issuers: set[str] = {GITHUB_ACTIONS, GOOGLE, SIGSTORE_DEX}
        self.requests: list[str] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.trust_config_path = workdir / "trust_config.json"
        self.trusted_root_path = workdir / "trusted_root.json"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> SigstoreTestInstance:
        """Serve Fulcio and Rekor on a free loopback port; write the trust files."""
        instance = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                instance.requests.append(self.path)
                try:
                    if self.path == "/api/v2/signingCert":
                        status, answer = (
                            200,
                            instance.fulcio_sign(self.headers.get("Authorization", ""), body),
                        )
                    elif self.path == "/api/v1/log/entries":
                        status, answer = 201, instance.rekor_append(body)
                    else:
                        status, answer = 404, {"code": 404, "message": f"no route {self.path}"}
                except FulcioRefusal as exc:
                    status, answer = exc.status, {"code": exc.status, "message": exc.message}
                raw = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.trusted_root_path.write_text(json.dumps(self.trusted_root(), indent=2))
        self.trust_config_path.write_text(json.dumps(self.trust_config(), indent=2))
        return self

    def close(self) -> None:
        """Stop the servers."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SigstoreTestInstance:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- trust material ----------------------------------------------------------------------

    def _log_instance(self, base_url: str, public_der: bytes, log_id: bytes) -> dict[str, Any]:
        return {
            "baseUrl": base_url,
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": _b64(public_der),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": {"start": _iso(self.created)},
            },
            "logId": {"keyId": _b64(log_id)},
        }

    def trusted_root(self) -> dict[str, Any]:
        """Return the instance's trusted root (protobuf-specs JSON, media type v0.1)."""
        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [
                self._log_instance(self.url, spki_der(self.tlog.key.public_key()), self.tlog.log_id)
            ],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "effectbench-test", "commonName": self.label},
                    "uri": self.url,
                    "certChain": {
                        "certificates": [
                            {"rawBytes": _b64(der(self.ca.intermediate))},
                            {"rawBytes": _b64(der(self.ca.root))},
                        ]
                    },
                    "validFor": {"start": _iso(self.created)},
                }
            ],
            "ctlogs": [
                self._log_instance(
                    self.url + "/ct", spki_der(self.ct_log.key.public_key()), self.ct_log.log_id
                )
            ],
            "timestampAuthorities": [],
        }

    def trust_config(self) -> dict[str, Any]:
        """Return a ClientTrustConfig: the trusted root plus a signing config for this URL."""

        def service(url: str) -> dict[str, Any]:
            return {
                "url": url,
                "majorApiVersion": 1,
                "validFor": {"start": _iso(self.created)},
                "operator": "effectbench-test",
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
            "trustedRoot": self.trusted_root(),
            "signingConfig": {
                "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
                "caUrls": [service(self.url)],
                "oidcUrls": [],
                "rekorTlogUrls": [service(self.url)],
                "tsaUrls": [],
                "rekorTlogConfig": {"selector": "ANY"},
                "tsaConfig": {"selector": "ANY"},
            },
        }

    # -- OIDC --------------------------------------------------------------------------------

    def mint_token(
        self,
        *,
        issuer: str,
        subject: str,
        email: str | None = None,
        lifetime: timedelta = timedelta(minutes=5),
        signing_key: ec.EllipticCurvePrivateKey | None = None,
        **claims: Any,
    ) -> str:
        """Return a JWT for audience ``sigstore`` signed by the test OIDC key."""
        now = datetime.now(UTC)
        payload: dict[str, Any] = {
            "iss": issuer,
            "sub": subject,
            "aud": TOKEN_AUDIENCE,
            "iat": int(now.timestamp()) - 1,
            "nbf": int(now.timestamp()) - 1,
            "exp": int((now + lifetime).timestamp()),
            **claims,
        }
        if email is not None:
            payload["email"] = email
            payload["email_verified"] = True
        return jwt.encode(payload, signing_key or self.oidc_key, algorithm="ES256")

    def email_token(self, email: str, *, issuer: str = GOOGLE) -> str:
        """A token like Google's (or any e-mail issuer) for ``email``."""
        return self.mint_token(issuer=issuer, subject=f"uid-{email}", email=email)

    def github_actions_token(self, workflow_ref: str) -> str:
        """A token like a GitHub Actions job's; ``workflow_ref`` is ``owner/repo/...@ref``."""
        repository = "/".join(workflow_ref.split("/")[:2])
        return self.mint_token(
            issuer=GITHUB_ACTIONS,
            subject=f"repo:{repository}:ref:refs/heads/main",
            job_workflow_ref=workflow_ref,
            repository=repository,
        )

    # -- the stand-in services ---------------------------------------------------------------

    def _verify_token(self, authorization: str) -> dict[str, Any]:
        if not authorization.startswith("Bearer "):
            raise FulcioRefusal(401, "missing bearer token")
        token = authorization.removeprefix("Bearer ")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self.oidc_key.public_key(),
                algorithms=["ES256"],
                audience=TOKEN_AUDIENCE,
                options={"require": ["iss", "sub", "aud", "exp", "iat"]},
            )
        except jwt.PyJWTError as exc:
            raise FulcioRefusal(401, f"invalid identity token: {exc}") from None
        if claims["iss"] not in self.trusted_issuers:
            raise FulcioRefusal(401, f"untrusted OIDC issuer {claims['iss']}")
        return claims

    @staticmethod
    def leaf_identity(claims: dict[str, Any]) -> LeafIdentity:
        """Map verified token claims to the certificate identity, following Fulcio's rules."""
        federated = claims.get("federated_claims") or {}
        issuer = str(federated.get("connector_id") or claims["iss"])
        if claims["iss"] == GITHUB_ACTIONS:
            ref = claims.get("job_workflow_ref")
            if not ref:
                raise FulcioRefusal(400, "GitHub Actions token without job_workflow_ref")
            repo = claims.get("repository")
            return LeafIdentity(
                san=x509.UniformResourceIdentifier(f"https://github.com/{ref}"),
                issuer=issuer,
                source_repository=f"https://github.com/{repo}" if repo else None,
            )
        if "email" in claims:
            if claims.get("email_verified") is not True:
                raise FulcioRefusal(400, "email not verified")
            return LeafIdentity(san=x509.RFC822Name(str(claims["email"])), issuer=issuer)
        subject = str(claims["sub"])
        if "://" not in subject:
            raise FulcioRefusal(400, f"cannot derive a certificate identity from sub {subject!r}")
        return LeafIdentity(san=x509.UniformResourceIdentifier(subject), issuer=issuer)

    def fulcio_sign(self, authorization: str, body: bytes) -> dict[str, Any]:
        """Handle ``POST /api/v2/signingCert``: verify the token and CSR, issue a leaf."""
        claims = self._verify_token(authorization)
        try:
            request = json.loads(body)
            csr = x509.load_pem_x509_csr(base64.b64decode(request["certificateSigningRequest"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise FulcioRefusal(400, f"bad certificate signing request: {exc}") from None
        if not csr.is_signature_valid:
            raise FulcioRefusal(400, "CSR signature does not verify (no proof of possession)")
        key = csr.public_key()
        if not isinstance(key, ec.EllipticCurvePublicKey):
            raise FulcioRefusal(400, "only ECDSA keys are accepted")
        leaf = self.ca.issue_leaf(key, self.leaf_identity(claims), ct_log=self.ct_log)
        chain = [pem(leaf), pem(self.ca.intermediate), pem(self.ca.root)]
        return {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}

    def rekor_append(self, body: bytes) -> dict[str, Any]:
        """Handle ``POST /api/v1/log/entries`` for ``dsse/0.0.1`` proposals."""
        try:
            proposal = json.loads(body)
            if proposal.get("kind") != "dsse" or proposal.get("apiVersion") != "0.0.1":
                raise FulcioRefusal(400, "this stand-in Rekor logs dsse/0.0.1 entries only")
            canonical = dsse_body(proposal)
        except (ValueError, KeyError, TypeError) as exc:
            raise FulcioRefusal(400, f"bad proposed entry: {exc}") from None
        return self.tlog.append(canonical)
