package e2enode

import "fmt"

// CoreDNS as kubeadm's CoreDNS addon deploys it (kubeadm v1.36,
// cmd/kubeadm/app/phases/addons/dns/manifests.go), from the image built
// here of hack/build-coredns.sh's binary.
const (
	coreDNSImage = "localhost/coredns:e2e"
	// coreDNSLabel selects the CoreDNS Pods and is the kube-dns Service's
	// selector (kubeadm's).
	coreDNSLabel = "k8s-app=kube-dns"
	// dnsServiceIP is kube-dns's ClusterIP: the tenth address of the API
	// server's service range 10.96.0.0/16, as kubeadm picks it, and the
	// kubelets' clusterDNS.
	dnsServiceIP = "10.96.0.10"
	// coreDNSReplicas is kubeadm's replica count.
	coreDNSReplicas = 2
)

// coreDNSCorefile is kubeadm's Corefile for the cluster.local domain
// without forward and loop: the nodes have no upstream (their resolv.conf,
// which a Pod of dnsPolicy Default gets, is empty, and forward refuses to
// start without a nameserver) and no network beyond this machine's test
// addresses; loop only detects a forward that reaches CoreDNS itself.
// Names outside the cluster domain are answered SERVFAIL, never sent on.
const coreDNSCorefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    reload
    loadbalance
}
`

// coreDNSManifests are kubeadm's: the ServiceAccount coredns, the
// ClusterRole system:coredns (list and watch of endpoints, services, pods,
// namespaces and endpointslices) and its binding, the ConfigMap coredns
// with the Corefile, the Deployment coredns (two replicas, preferred
// anti-affinity on kubernetes.io/hostname, readiness on :8181/ready,
// liveness on :8080/health) and the Service kube-dns. Not kubeadm's: the
// image is never pulled (imagePullPolicy Never), the readiness probe runs
// every second (kubeadm's default is 10 s; the test waits on it), and the
// image runs as root: kubeadm's image is nonroot with the file capability
// to bind port 53 on its binary, which an image written here cannot carry;
// root with every capability dropped but NET_BIND_SERVICE, as kubeadm's
// securityContext says, binds it.
func coreDNSManifests() string {
	return `apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
` + indent(coreDNSCorefile, "    ") + `---
` + coreDNSDeployment() + `---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/cluster-service: "true", kubernetes.io/name: CoreDNS}
  annotations: {prometheus.io/port: "9153", prometheus.io/scrape: "true"}
spec:
  clusterIP: ` + dnsServiceIP + `
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
  - {name: metrics, port: 9153, protocol: TCP, targetPort: 9153}
  selector: {k8s-app: kube-dns}
`
}

func coreDNSDeployment() string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: %d
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchExpressions: [{key: k8s-app, operator: In, values: [kube-dns]}]
              topologyKey: kubernetes.io/hostname
      tolerations:
      - {key: CriticalAddonsOnly, operator: Exists}
      - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
      nodeSelector: {kubernetes.io/os: linux}
      containers:
      - name: coredns
        image: %s
        imagePullPolicy: Never
        resources:
          limits: {memory: 170Mi}
          requests: {cpu: 100m, memory: 70Mi}
        args: ["-conf", "/etc/coredns/Corefile"]
        volumeMounts:
        - {name: config-volume, mountPath: /etc/coredns, readOnly: true}
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        - {containerPort: 9153, name: metrics, protocol: TCP}
        - {containerPort: 8080, name: liveness-probe, protocol: TCP}
        - {containerPort: 8181, name: readiness-probe, protocol: TCP}
        livenessProbe:
          httpGet: {path: /health, port: liveness-probe, scheme: HTTP}
          initialDelaySeconds: 60
          timeoutSeconds: 5
          successThreshold: 1
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: readiness-probe, scheme: HTTP}
          periodSeconds: 1
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
          readOnlyRootFilesystem: true
      dnsPolicy: Default
      volumes:
      - name: config-volume
        configMap:
          name: coredns
          items: [{key: Corefile, path: Corefile}]
`, coreDNSReplicas, coreDNSImage)
}
