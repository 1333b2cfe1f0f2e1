package e2enode

import (
	"fmt"
	"os"
	"strings"
)

// proxyMode is one kube-proxy DaemonSet: its mode and the node it runs on.
type proxyMode struct {
	// Name is the DaemonSet's and its ConfigMap's (kubeadm's: kube-proxy).
	Name string
	// Mode is the KubeProxyConfiguration's mode: nftables or iptables.
	Mode string
	// Node is the node it runs on (a nodeSelector on kubernetes.io/hostname).
	Node string
}

// kubeProxyLabel selects every kube-proxy Pod (kubeadm's label); each Pod
// also says its mode in proxyModeLabel, which its DaemonSet's selector
// holds, so that the two DaemonSets never claim each other's Pods.
const (
	kubeProxyLabel = "k8s-app=kube-proxy"
	proxyModeLabel = "proxy-mode"
	// clusterCIDR is every node's Pod range: kube-proxy masquerades traffic
	// to a Service from outside it, as kubeadm's podSubnet.
	clusterCIDR = "10.244.0.0/16"
	// xtablesLock is the iptables lock kubeadm's kube-proxy shares with
	// the host's iptables.
	xtablesLock = "/run/xtables.lock"
)

// kubeProxyManifests are kube-proxy as kubeadm deploys it, one DaemonSet
// per mode: the ServiceAccount kube-proxy bound to system:node-proxier, a
// ConfigMap per DaemonSet with the KubeProxyConfiguration and the
// kubeconfig, the Pod hostNetwork, privileged, --hostname-override from the
// node's name. As kubeadm's kubeconfig, the API server is reached at its
// own address (apiServer), not the kubernetes Service's ClusterIP: that
// route is kube-proxy's to program, it cannot depend on it to start. Two
// settings are not kubeadm's: conntrack.maxPerCore 0 (as kind sets it: the
// conntrack table's size is the host's to set, read-only in a network
// namespace not the first), and a readiness probe on /healthz, so that
// Ready says the rules are synced.
func kubeProxyManifests(apiServer string, modes []proxyMode) string {
	var b strings.Builder
	b.WriteString(`apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-proxy, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-proxier"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-proxier"}
subjects: [{kind: ServiceAccount, name: kube-proxy, namespace: kube-system}]
`)
	for _, m := range modes {
		b.WriteString("---\n" + kubeProxyConfigMap(apiServer, m) + "---\n" + kubeProxyDaemonSet(m))
	}
	return b.String()
}

func kubeProxyConfigMap(apiServer string, m proxyMode) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s, namespace: kube-system, labels: {app: kube-proxy}}
data:
  config.conf: |
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    mode: %[2]s
    clusterCIDR: %[3]s
    metricsBindAddress: 127.0.0.1:10249
    healthzBindAddress: 0.0.0.0:10256
    clientConnection: {kubeconfig: /var/lib/kube-proxy/kubeconfig.conf}
    conntrack: {maxPerCore: 0}
  kubeconfig.conf: |
    apiVersion: v1
    kind: Config
    clusters:
    - name: default
      cluster:
        certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
        server: %[4]s
    contexts:
    - name: default
      context: {cluster: default, namespace: default, user: default}
    current-context: default
    users:
    - name: default
      user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}
`, m.Name, m.Mode, clusterCIDR, apiServer)
}

func kubeProxyDaemonSet(m proxyMode) string {
	// kubeadm mounts the host's /lib/modules; a host without it (a
	// sandbox's kernel with everything built in) would fail the Pod.
	modulesMount, modulesVolume := "", ""
	if _, err := os.Stat("/lib/modules"); err == nil {
		modulesMount = "\n        - {mountPath: /lib/modules, name: lib-modules, readOnly: true}"
		modulesVolume = "\n      - {name: lib-modules, hostPath: {path: /lib/modules}}"
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %[1]s, namespace: kube-system, labels: {k8s-app: kube-proxy}}
spec:
  selector: {matchLabels: {k8s-app: kube-proxy, %[2]s: %[3]s}}
  updateStrategy: {type: RollingUpdate}
  template:
    metadata: {labels: {k8s-app: kube-proxy, %[2]s: %[3]s}}
    spec:
      containers:
      - name: kube-proxy
        image: %[4]s
        imagePullPolicy: Never
        command: [/usr/local/bin/kube-proxy, --config=/var/lib/kube-proxy/config.conf, --hostname-override=$(NODE_NAME)]
        env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        securityContext: {privileged: true}
        readinessProbe:
          httpGet: {path: /healthz, port: 10256}
          periodSeconds: 1
        volumeMounts:
        - {mountPath: /var/lib/kube-proxy, name: kube-proxy}
        - {mountPath: %[8]s, name: xtables-lock}%[5]s
      hostNetwork: true
      priorityClassName: system-node-critical
      serviceAccountName: kube-proxy
      tolerations: [{operator: Exists}]
      nodeSelector: {kubernetes.io/os: linux, kubernetes.io/hostname: %[7]s}
      volumes:
      - {name: kube-proxy, configMap: {name: %[1]s}}
      - {name: xtables-lock, hostPath: {path: %[8]s, type: FileOrCreate}}%[6]s
`, m.Name, proxyModeLabel, m.Mode, kubeProxyImage, modulesMount, modulesVolume, m.Node, xtablesLock)
}
