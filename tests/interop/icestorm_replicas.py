"""The IceGrid application of a replicated IceStorm 3.7 (its HA mode: an elected master, the
others slaves), shared by tests/interop/scenarios_upstream.py and perf/cluster.py.

Each replica is an IceBox server with activation "always" (its node starts it again when it
dies); its TopicManager and Publish adapters join two replica groups, and the adapter ids follow
the <instance><k>.TopicManager / .Node pattern by which the replicas find each other through the
registry. Only the XML is made here; starting IceGrid is the caller's."""


def replica_icebox(instance, k, tm, pub, node, tm_group, pub_group, election_timeout_s=1,
                   run_as_root=False, extra_properties=None):
    """One replica's <icebox> element: replica k (1-based, IceStorm's NodeId) of `instance`, its
    adapters on the endpoint strings tm, pub and node ("tcp -h H -p P"), its election timeouts in
    seconds, `user="root"` when run_as_root, and more service properties from extra_properties
    (a dict, e.g. {"Trace.Election": "1"}: each name is prefixed with the service's)."""
    user = ' user="root"' if run_as_root else ""
    t = election_timeout_s
    props = {"InstanceName": instance, "NodeId": k, "LMDB.Path": "${service.data}", "LMDB.MapSize": 16,
             "Discard.Interval": 1, "Election.MasterTimeout": t, "Election.ElectionTimeout": t,
             "Election.ResponseTimeout": t}
    props.update(extra_properties or {})
    lines = "\n".join('            <property name="${service}.%s" value="%s"/>' % (n, v) for n, v in props.items())
    return """      <icebox id="{i}{k}" exe="/usr/bin/icebox" activation="always"{user}>
        <property name="Ice.Warn.Connections" value="0"/>
        <service name="IceStorm" entry="IceStormService,37:createIceStorm">
          <adapter name="${{service}}.TopicManager" id="{i}{k}.TopicManager" replica-group="{tm_group}"
                   endpoints="{tm}"/>
          <adapter name="${{service}}.Publish" id="{i}{k}.Publish" replica-group="{pub_group}" endpoints="{pub}"/>
          <adapter name="${{service}}.Node" id="{i}{k}.Node" endpoints="{node}"/>
          <properties>
{props}
          </properties>
        </service>
      </icebox>""".format(i=instance, k=k, user=user, tm=tm, pub=pub, node=node, tm_group=tm_group,
                          pub_group=pub_group, props=lines)


def application(name, instance, tm_group, pub_group, nodes, comment=None):
    """The <icegrid> descriptor of application `name`: the two replica groups (random load
    balancing over all replicas; the TopicManager group carries the well-known object
    <instance>/TopicManager) and `nodes`, a list of (node name, [replica_icebox(...), ...])."""
    body = "\n".join('    <node name="%s">\n%s\n    </node>' % (n, "\n".join(boxes)) for n, boxes in nodes)
    head = "<!-- %s -->\n" % comment if comment else ""
    return head + """<icegrid>
  <application name="{name}">
    <replica-group id="{tm_group}">
      <load-balancing type="random" n-replicas="0"/>
      <object identity="{i}/TopicManager" type="::IceStorm::TopicManager"/>
    </replica-group>
    <replica-group id="{pub_group}">
      <load-balancing type="random" n-replicas="0"/>
    </replica-group>
{body}
  </application>
</icegrid>
""".format(name=name, i=instance, tm_group=tm_group, pub_group=pub_group, body=body)
