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

/**
 * A CA and a server certificate it signed (localhost, example.invalid,
 * 127.0.0.1; valid until 2126), for a proxy that verifies the server it
 * connects on to: upstream's refuses a self-signed CA certificate used as a
 * server's (CaUsedAsEndEntity). Made once with openssl (req -x509 with
 * CA:TRUE for the CA; req + x509 -req with CA:FALSE, serverAuth for the leaf).
 * Test material only: it protects nothing.
 */
export const TEST_CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUP4rybAxmIMnTJEVRdG2zKCG9H2YwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPZXhlY211eCB0ZXN0IENBMCAXDTI2MTEyOTA2MDIwNFoYDzIx
MjYxMTA1MDYwMjA0WjAaMRgwFgYDVQQDDA9leGVjbXV4IHRlc3QgQ0EwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAAR1FobD9xbmKZyMye5JsrfaYCeu0sn5OFJwTh09
fjZJrvsova5Ya2leWBuC++OErT/0GrUtz1EaCh9dC+RaG/kho2MwYTAdBgNVHQ4E
FgQUHy1uYgCCm0/xjMHJekQr37gmprIwHwYDVR0jBBgwFoAUHy1uYgCCm0/xjMHJ
ekQr37gmprIwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZI
zj0EAwIDSQAwRgIhAKQ0qku6UooXyPVlnjDTIae2NyLwc5W08/teziGpx+SWAiEA
xuIW1GDJJ2SMnrlMrNK5MpcbGo5e0kvpYycfplcMTAY=
-----END CERTIFICATE-----`;

export const TEST_LEAF_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqwackPA9xcurjCOG
aiIGxKMHKMMbZY36gi3/ISmZ16uhRANCAAQTbiAnixI4wHC23oQlIAtuHcNZ+k1T
K/y7MctW8h1BqNmPipEasUOi/yQEOjMOvdxRB7NBizuCOYLK9/itHlVh
-----END PRIVATE KEY-----`;

export const TEST_LEAF_CERT = `-----BEGIN CERTIFICATE-----
MIIB4DCCAYagAwIBAgIUG6fj9FH0z6khYWrRaFURraPP4SwwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPZXhlY211eCB0ZXN0IENBMCAXDTI2MTEyOTA2MDIwNFoYDzIx
MjYxMTA1MDYwMjA0WjAeMRwwGgYDVQQDDBNleGVjbXV4IHRlc3Qgc2VydmVyMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEE24gJ4sSOMBwtt6EJSALbh3DWfpNUyv8
uzHLVvIdQajZj4qRGrFDov8kBDozDr3cUQezQYs7gjmCyvf4rR5VYaOBozCBoDAr
BgNVHREEJDAigglsb2NhbGhvc3SCD2V4YW1wbGUuaW52YWxpZIcEfwAAATAMBgNV
HRMBAf8EAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMBMA4GA1UdDwEB/wQEAwIHgDAd
BgNVHQ4EFgQUJ5ytgPK1nxi0wpjI6LyGOBw4LK4wHwYDVR0jBBgwFoAUHy1uYgCC
m0/xjMHJekQr37gmprIwCgYIKoZIzj0EAwIDSAAwRQIhAJFyAawez2vrxaccTsL0
O7t9Sxk/c1eH8+wlD9tvZj+TAiBYdyKAE0wBJBPhom2o1HnjtC/pMoQHswvhI6eV
mySy2w==
-----END CERTIFICATE-----`;
