/**
 * A self-signed certificate for https tests (localhost, example.invalid,
 * 127.0.0.1; valid until 2126), made once with:
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
 *     -subj "/CN=execmux test" -addext "subjectAltName=DNS:localhost,DNS:example.invalid,IP:127.0.0.1"
 * Test material only: it protects nothing.
 */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgeTIfl12yHWamY1nw
5U8N5sQEy9DaJrrQTtlG+sZpyhuhRANCAASHkz0dEsj0PEAtlkHZH9t94fp5kvQx
fyznpTV03811/R2AMniiu3g7aqbys+cCGrzkLW1418F5LrbRP+k1LLxb
-----END PRIVATE KEY-----`;

export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUYxbe7JLRCcqWD7v6mhuHK2lE9aowCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMZXhlY211eCB0ZXN0MCAXDTI2MTEyMjIwMzYwMVoYDzIxMjYx
MDI5MjAzNjAxWjAXMRUwEwYDVQQDDAxleGVjbXV4IHRlc3QwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAASHkz0dEsj0PEAtlkHZH9t94fp5kvQxfyznpTV03811/R2A
Mniiu3g7aqbys+cCGrzkLW1418F5LrbRP+k1LLxbo4GAMH4wHQYDVR0OBBYEFGUk
1m5Mo+VWliYl5gVq14dzVueMMB8GA1UdIwQYMBaAFGUk1m5Mo+VWliYl5gVq14dz
VueMMA8GA1UdEwEB/wQFMAMBAf8wKwYDVR0RBCQwIoIJbG9jYWxob3N0gg9leGFt
cGxlLmludmFsaWSHBH8AAAEwCgYIKoZIzj0EAwIDSAAwRQIhALTGcaYmaxxHdQPt
BxhbEImpyPiYX9Covgel0I+h7ZrFAiBiPZ/MPtGbfJla8h6PxS/w8W7uXzBX46Ia
nWm4sxfxeg==
-----END CERTIFICATE-----`;
