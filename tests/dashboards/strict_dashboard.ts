// The types every dashboard of dashboards/ is checked against (tests/e2e/dashboards_schema_test.py
// writes `const d: GrafanaDashboard = <json>` and `const d: StrictDashboard = <json>` per
// dashboard and runs `tsc --noEmit --strict`).
//
// `Dashboard` is Grafana's published dashboard schema (@grafana/schema, the classic JSON model
// Grafana imports). It leaves panel `options`, `fieldConfig.defaults.custom` and `targets` open
// (Record<string, unknown>), so StrictDashboard narrows them with the schema's own per-panel
// types (the panelcfg types Grafana generates for each core panel plugin) and the Prometheus query
// model: a misspelt option or a wrong field type then fails too.
//
// JSON cannot spell a TypeScript string enum member ("thresholds" is not
// FieldColorModeId.Thresholds), so Json<T> turns every string enum into the union of its values;
// everything else is unchanged. GrafanaDashboard is Grafana's Dashboard type read that way.
import type {
  Dashboard,
  DataQuery,
  FieldConfig,
  FieldConfigSource,
  GridPos,
  RowPanel,
  VariableModel,
  Panel,
} from '@grafana/schema';
import type * as Heatmap from '@grafana/schema/dist/esm/raw/composable/heatmap/panelcfg/x/HeatmapPanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as StateTimeline from '@grafana/schema/dist/esm/raw/composable/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';


export type Json<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<Json<U>>
      : T extends object
        ? { [K in keyof T]: Json<T[K]> }
        : T;

export type GrafanaDashboard = Json<Dashboard>;

// Every panel and every query names the dashboard's datasource variable, never a concrete data
// source (its uid differs on every Grafana).
export interface DatasourceVariableRef {
  type: 'prometheus';
  uid: '${datasource}';
}

// Grafana's Prometheus query model (the fields of the Prometheus data source's DataQuery that
// these dashboards use).
export interface PrometheusTarget extends Omit<Json<DataQuery>, 'datasource'> {
  datasource: DatasourceVariableRef;
  expr: string;
  legendFormat?: string;
  instant?: boolean;
  range?: boolean;
  format?: 'time_series' | 'table' | 'heatmap';
  interval?: string;
  exemplar?: boolean;
  editorMode?: 'code' | 'builder';
}

type FieldConfigWith<C> = Omit<Json<FieldConfig>, 'custom'> & { custom?: Json<C> };

type FieldConfigSourceWith<C> = Omit<Json<FieldConfigSource>, 'defaults'> & {
  defaults: FieldConfigWith<C>;
};

type TypedPanel<T extends string, O, C> = Omit<
  Json<Panel>,
  'type' | 'options' | 'fieldConfig' | 'targets' | 'datasource' | 'id' | 'gridPos' | 'title'
> & {
  type: T;
  id: number;
  title: string;
  gridPos: Json<GridPos>;
  datasource: DatasourceVariableRef;
  options: Json<O>;
  fieldConfig: FieldConfigSourceWith<C>;
  targets: PrometheusTarget[];
};

export type StrictPanel =
  | TypedPanel<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>
  | TypedPanel<'table', Table.Options, Table.FieldConfig>
  | TypedPanel<'stat', Stat.Options, Record<string, never>>
  | TypedPanel<'heatmap', Heatmap.Options, Heatmap.FieldConfig>
  | TypedPanel<'state-timeline', StateTimeline.Options, StateTimeline.FieldConfig>;

export type StrictRow = Omit<Json<RowPanel>, 'panels' | 'id' | 'gridPos'> & {
  id: number;
  gridPos: Json<GridPos>;
  panels: StrictPanel[];
};

export type StrictVariable = Omit<Json<VariableModel>, 'datasource'> & {
  datasource?: DatasourceVariableRef;
};

export type StrictDashboard = Omit<
  Json<Dashboard>,
  'panels' | 'templating' | 'uid' | 'title' | 'tags' | 'annotations'
> & {
  uid: string;
  title: string;
  tags: string[];
  annotations: Json<Dashboard['annotations']>;
  panels: Array<StrictPanel | StrictRow>;
  templating: { list: StrictVariable[] };
};
