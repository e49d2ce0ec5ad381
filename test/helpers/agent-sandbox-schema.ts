/**
 * JSON Schemas for the manifests in deploy/agent-sandbox/, written from the
 * fields Kubernetes agent-sandbox's CRDs define (helm/crds/*.yaml of
 * kubernetes-sigs/agent-sandbox at commit 2fd412d5, 2026-08-22: the
 * v1beta1 versions, which serve and store), and for the NetworkPolicy from
 * networking.k8s.io/v1.
 *
 * The agent-sandbox fields of each kind's spec are all here, as the CRDs
 * type them (required fields, enums). Within podTemplate.spec (a core
 * PodSpec in the CRDs) only the fields these manifests use and their
 * neighbours are listed, typed as the CRD types them; a field the CRD
 * allows but this schema lacks is refused, to be added from the CRD when a
 * manifest needs it. Every object is closed (additionalProperties: false):
 * the API server would silently prune a misspelled or misplaced field, which
 * is exactly the mistake these schemas exist to catch.
 */

type Schema = Record<string, unknown>;

const closed = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
});
const string: Schema = { type: "string" };
const int32: Schema = { type: "integer", minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };
const int64: Schema = { type: "integer" };
const boolean: Schema = { type: "boolean" };
const arrayOf = (items: Schema): Schema => ({ type: "array", items });
const enumOf = (...values: string[]): Schema => ({ type: "string", enum: values });
const stringMap: Schema = { type: "object", additionalProperties: { type: "string" } };
const intOrString: Schema = { anyOf: [{ type: "integer" }, { type: "string" }] };
/** A resource.Quantity, as the CRDs' pattern checks it. */
const quantity: Schema = {
  anyOf: [{ type: "integer" }, { type: "string", pattern: "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$" }],
};
const dateTime: Schema = { type: "string", format: "date-time" };
const nameRef = closed({ name: string }, ["name"]);

/** The metadata a manifest sets (the CRDs say only `type: object`; the API server knows ObjectMeta). */
const objectMeta = closed({ name: string, namespace: string, labels: stringMap, annotations: stringMap }, ["name"]);

const labelSelector = closed({
  matchLabels: stringMap,
  matchExpressions: arrayOf(closed({ key: string, operator: string, values: arrayOf(string) }, ["key", "operator"])),
});
const ipBlock = closed({ cidr: string, except: arrayOf(string) }, ["cidr"]);
const networkPolicyPeer = closed({ ipBlock, namespaceSelector: labelSelector, podSelector: labelSelector });
const networkPolicyPort = closed({ port: intOrString, endPort: int32, protocol: string });
const ingressRule = closed({ from: arrayOf(networkPolicyPeer), ports: arrayOf(networkPolicyPort) });
const egressRule = closed({ to: arrayOf(networkPolicyPeer), ports: arrayOf(networkPolicyPort) });

const seccompProfile = closed({ type: string, localhostProfile: string }, ["type"]);
const fieldRef = closed({ apiVersion: string, fieldPath: string }, ["fieldPath"]);
const keyRef = closed({ key: string, name: string, optional: boolean }, ["key"]);
const envVar = closed(
  { name: string, value: string, valueFrom: closed({ fieldRef, secretKeyRef: keyRef, configMapKeyRef: keyRef, resourceFieldRef: closed({ containerName: string, divisor: quantity, resource: string }, ["resource"]) }) },
  ["name"],
);
const probe = closed({
  httpGet: closed({ host: string, httpHeaders: arrayOf(closed({ name: string, value: string }, ["name", "value"])), path: string, port: intOrString, scheme: string }, ["port"]),
  tcpSocket: closed({ host: string, port: intOrString }, ["port"]),
  exec: closed({ command: arrayOf(string) }),
  initialDelaySeconds: int32,
  periodSeconds: int32,
  timeoutSeconds: int32,
  successThreshold: int32,
  failureThreshold: int32,
  terminationGracePeriodSeconds: int64,
});
const container = closed(
  {
    name: string,
    image: string,
    imagePullPolicy: string,
    command: arrayOf(string),
    args: arrayOf(string),
    workingDir: string,
    env: arrayOf(envVar),
    ports: arrayOf(closed({ containerPort: int32, hostIP: string, hostPort: int32, name: string, protocol: string }, ["containerPort"])),
    startupProbe: probe,
    readinessProbe: probe,
    livenessProbe: probe,
    resources: closed({ limits: { type: "object", additionalProperties: quantity }, requests: { type: "object", additionalProperties: quantity } }),
    securityContext: closed({
      allowPrivilegeEscalation: boolean,
      capabilities: closed({ add: arrayOf(string), drop: arrayOf(string) }),
      privileged: boolean,
      readOnlyRootFilesystem: boolean,
      runAsGroup: int64,
      runAsNonRoot: boolean,
      runAsUser: int64,
      seccompProfile,
    }),
    volumeMounts: arrayOf(closed({ mountPath: string, name: string, readOnly: boolean, subPath: string }, ["mountPath", "name"])),
  },
  ["name"],
);
const volume = closed(
  {
    name: string,
    emptyDir: closed({ medium: string, sizeLimit: quantity }),
    secret: closed({ secretName: string, defaultMode: int32, optional: boolean, items: arrayOf(closed({ key: string, path: string, mode: int32 }, ["key", "path"])) }),
    configMap: closed({ name: string, defaultMode: int32, optional: boolean }),
  },
  ["name"],
);
const podSpec = closed(
  {
    automountServiceAccountToken: boolean,
    enableServiceLinks: boolean,
    shareProcessNamespace: boolean,
    hostUsers: boolean,
    runtimeClassName: string,
    serviceAccountName: string,
    terminationGracePeriodSeconds: int64,
    nodeSelector: stringMap,
    securityContext: closed({ fsGroup: int64, fsGroupChangePolicy: string, runAsGroup: int64, runAsNonRoot: boolean, runAsUser: int64, seccompProfile, supplementalGroups: arrayOf(int64) }),
    initContainers: arrayOf(container),
    containers: arrayOf(container),
    volumes: arrayOf(volume),
  },
  ["containers"],
);
/** `podTemplate` of a Sandbox and a SandboxTemplate (the CRDs allow only labels and annotations in its metadata). */
const podTemplate = closed({ metadata: closed({ labels: stringMap, annotations: stringMap }), spec: podSpec }, ["spec"]);
/** A PersistentVolumeClaim template: none of these manifests has one, so only its outline is checked. */
const volumeClaimTemplates = arrayOf({ type: "object" });

const resource = (apiVersion: string, kind: string, spec: Schema): Schema =>
  closed({ apiVersion: { const: apiVersion }, kind: { const: kind }, metadata: objectMeta, spec }, ["apiVersion", "kind", "metadata", "spec"]);

/** Each kind these manifests may hold, by `apiVersion/kind`. */
export const MANIFEST_SCHEMAS: Record<string, Schema> = {
  "extensions.agents.x-k8s.io/v1beta1/SandboxTemplate": resource(
    "extensions.agents.x-k8s.io/v1beta1",
    "SandboxTemplate",
    closed(
      {
        envVarsInjectionPolicy: enumOf("Allowed", "Overrides", "Disallowed"),
        networkPolicy: closed({ ingress: arrayOf(ingressRule), egress: arrayOf(egressRule) }),
        networkPolicyManagement: enumOf("Managed", "Unmanaged"),
        podTemplate,
        service: boolean,
        volumeClaimTemplates,
        volumeClaimTemplatesPolicy: enumOf("Disallowed", "Allowed", "Overrides"),
      },
      ["podTemplate"],
    ),
  ),
  "extensions.agents.x-k8s.io/v1beta1/SandboxWarmPool": resource(
    "extensions.agents.x-k8s.io/v1beta1",
    "SandboxWarmPool",
    closed(
      {
        replicas: { ...int32, minimum: 0 },
        sandboxTemplateRef: nameRef,
        updateStrategy: closed({ type: enumOf("Recreate", "OnReplenish") }),
      },
      ["sandboxTemplateRef"],
    ),
  ),
  "extensions.agents.x-k8s.io/v1beta1/SandboxClaim": resource(
    "extensions.agents.x-k8s.io/v1beta1",
    "SandboxClaim",
    closed(
      {
        additionalPodMetadata: closed({ annotations: stringMap, labels: stringMap }),
        env: arrayOf(closed({ containerName: string, name: string, value: string }, ["name", "value"])),
        lifecycle: closed({
          shutdownPolicy: enumOf("Delete", "DeleteForeground", "Retain"),
          shutdownTime: dateTime,
          ttlSecondsAfterFinished: { ...int32, minimum: 0 },
        }),
        volumeClaimTemplates,
        warmPoolRef: nameRef,
      },
      ["warmPoolRef"],
    ),
  ),
  "agents.x-k8s.io/v1beta1/Sandbox": resource(
    "agents.x-k8s.io/v1beta1",
    "Sandbox",
    closed(
      {
        operatingMode: enumOf("Running", "Suspended"),
        podTemplate,
        service: boolean,
        shutdownPolicy: enumOf("Delete", "Retain"),
        shutdownTime: dateTime,
        volumeClaimTemplates,
      },
      ["podTemplate"],
    ),
  ),
  "networking.k8s.io/v1/NetworkPolicy": resource(
    "networking.k8s.io/v1",
    "NetworkPolicy",
    closed({ podSelector: labelSelector, policyTypes: arrayOf(enumOf("Ingress", "Egress")), ingress: arrayOf(ingressRule), egress: arrayOf(egressRule) }, ["podSelector"]),
  ),
};
